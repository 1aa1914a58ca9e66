import {groupConcat} from '../../store/dialect.js'
import type {Db} from '../../store/database.js'
import type {AuthorizationCodeRow, SigninSessionRow} from './tables.js'

export async function insertCode(db: Db, row: Omit<AuthorizationCodeRow, 'used_at' | 'superseded_at'>): Promise<void> {
  await db.insertInto('authorization_codes').values(row).execute()
}

export async function findCode(db: Db, codeHash: string): Promise<AuthorizationCodeRow | undefined> {
  return db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst()
}

/** Marks the code used; false when another exchange got there first. */
export async function consumeCode(db: Db, codeHash: string, now: string): Promise<boolean> {
  const result = await db.updateTable('authorization_codes').set({used_at: now}).where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export interface AuthorizedApplicationRow {
  client_id: string
  name: string
  url: string
  logo_url: string
  scopes: string
  since: string
  last_used_at: string | null
}

/** The clients a member has live tokens with: what the member allowed and has not taken back. */
export async function authorizedApplications(db: Db, memberId: number, now: string): Promise<AuthorizedApplicationRow[]> {
  return db
    .selectFrom('access_tokens as t')
    .innerJoin('clients as c', 'c.id', 't.client_id')
    .where('t.member_id', '=', memberId)
    .where('t.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', now)]))
    .where('c.expired_at', 'is', null)
    .groupBy(['c.id', 'c.name', 'c.url', 'c.logo_url'])
    .select((eb) => [
      'c.id as client_id',
      'c.name',
      'c.url',
      'c.logo_url',
      groupConcat(db, eb.ref('t.scopes'), ' ').as('scopes'),
      eb.fn.min<string>('t.created_at').as('since'),
      eb.fn.max<string | null>('t.last_used_at').as('last_used_at'),
    ])
    .orderBy('c.name')
    .execute()
}

export async function insertSession(db: Db, row: Omit<SigninSessionRow, 'ended_at'>): Promise<void> {
  await db.insertInto('signin_sessions').values(row).execute()
}

export async function findSession(db: Db, idHash: string): Promise<SigninSessionRow | undefined> {
  return db.selectFrom('signin_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst()
}

/** Ends a live session; its expiry moves to now, so the sweep can take it. An expired one is left to the sweep. */
export async function endSession(db: Db, idHash: string, now: string): Promise<void> {
  await db.updateTable('signin_sessions').set({ended_at: now, expires_at: now}).where('id_hash', '=', idHash).where('ended_at', 'is', null).where('expires_at', '>', now).execute()
}

/** Ends every live session (a leaked store key); answers how many. */
export async function endEverySession(db: Db, now: string): Promise<number> {
  const result = await db.updateTable('signin_sessions').set({ended_at: now, expires_at: now}).where('ended_at', 'is', null).where('expires_at', '>', now).executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Deletes every session past its expiry (ended ones included, see endSession); answers how many. */
export async function deleteSpentSessions(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('signin_sessions').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}
