import type {SignonDb as Db} from './tables.js'
import {type Insertable, sql} from 'kysely'
import type {IdTokenSessionRow, PushedRequestRow, PushedRequestTable, SigninSessionRow, SigningKeyRow} from './tables.js'
import {iso} from '../../lib/clock.js'
import {writeTransaction} from '../../store/transactions.js'

export async function insertSession(db: Db, row: Omit<SigninSessionRow, 'ended_at'>): Promise<void> {
  await db.insertInto('signin_sessions').values(row).execute()
}

export async function findSession(db: Db, idHash: string): Promise<SigninSessionRow | undefined> {
  return db.selectFrom('signin_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst()
}

/** A session that just ended: whom its logout tokens name. */
export interface EndedSession {
  sid: string | null
  member_id: number
}

/**
 * Ends a live session; its expiry moves to now, so the sweep can take it. An expired one is left
 * to the sweep. Answers the session it ended, if any.
 */
export async function endSession(db: Db, idHash: string, now: string): Promise<EndedSession[]> {
  return endSessions(db, [idHash], now)
}

/** Ends every live session (a leaked store key); answers them. */
export async function endEverySession(db: Db, now: string): Promise<EndedSession[]> {
  return db
    .updateTable('signin_sessions')
    .set({ended_at: now, expires_at: now})
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['sid', 'member_id'])
    .execute()
}

/**
 * The live sessions their member's change already voided (sessionMember refuses them): a
 * deactivation, a password change or "sign out everywhere" since they began. Answers their keys.
 */
export async function voidedSessions(db: Db, now: string): Promise<string[]> {
  const rows = await db
    .selectFrom('signin_sessions as s')
    .innerJoin('members as m', 'm.id', 's.member_id')
    .select('s.id_hash')
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where((eb) => eb.or([eb('m.active', '!=', 1), eb('m.password_changed_at', '>', eb.ref('s.created_at')), eb('m.sessions_ended_at', '>=', eb.ref('s.created_at'))]))
    .execute()
  return rows.map((row) => row.id_hash)
}

/** Ends every live session of a member ("sign out everywhere"); answers those it ended. */
export async function endMemberSessions(db: Db, memberId: number, now: string): Promise<EndedSession[]> {
  return db
    .updateTable('signin_sessions')
    .set({ended_at: now, expires_at: now})
    .where('member_id', '=', memberId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['sid', 'member_id'])
    .execute()
}

/** Ends the given sessions that are still live; answers those it ended. */
export async function endSessions(db: Db, idHashes: string[], now: string): Promise<EndedSession[]> {
  return db
    .updateTable('signin_sessions')
    .set({ended_at: now, expires_at: now})
    .where('id_hash', 'in', idHashes)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['sid', 'member_id'])
    .execute()
}

/** Records that a client got an ID token in a session; once per pair. */
export async function insertIdTokenSession(db: Db, row: IdTokenSessionRow): Promise<void> {
  await db
    .insertInto('id_token_sessions')
    .values(row)
    .onConflict((oc) => oc.columns(['sid', 'client_id']).doNothing())
    .execute()
}

/** A client to tell of an ended session, and whether it registered that its logout tokens need the sid. */
export type LogoutAudienceRow = IdTokenSessionRow & {session_required: number}

/**
 * Takes the clients that got an ID token in these sessions and can hear of a logout (a
 * back-channel logout URI, not expired); the records go, each session ends once.
 */
export async function takeLogoutAudience(db: Db, sids: string[]): Promise<LogoutAudienceRow[]> {
  if (sids.length === 0) return []
  const rows = await db
    .selectFrom('id_token_sessions as t')
    .innerJoin('clients as c', 'c.id', 't.client_id')
    .select(['t.sid', 't.client_id', 't.member_id', 't.created_at', 'c.backchannel_logout_session_required as session_required'])
    .where('t.sid', 'in', sids)
    .where('c.backchannel_logout_uri', 'is not', null)
    .where('c.expired_at', 'is', null)
    .orderBy('t.created_at')
    .execute()
  await db.deleteFrom('id_token_sessions').where('sid', 'in', sids).execute()
  return rows
}

/** Drops the records of sessions the sweep took (they expired without an ending to tell). */
export async function deleteOrphanIdTokenSessions(db: Db): Promise<void> {
  await db
    .deleteFrom('id_token_sessions')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('signin_sessions as s').select('s.sid').whereRef('s.sid', '=', 'id_token_sessions.sid'))))
    .execute()
}

/**
 * Sign-in sessions that would still open the consent page (the metrics' active sessions): neither
 * ended nor expired, of an active member whose password and sessions have not changed since they
 * began (as service.ts sessionMember decides for one).
 */
export async function countLiveSessions(db: Db, now: string): Promise<number> {
  const row = await db
    .selectFrom('signin_sessions as s')
    .innerJoin('members as m', 'm.id', 's.member_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('m.active', '=', 1)
    .whereRef('m.password_changed_at', '<=', 's.created_at')
    .where((eb) => eb.or([eb('m.sessions_ended_at', 'is', null), eb('m.sessions_ended_at', '<', eb.ref('s.created_at'))]))
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

/** Deletes every session past its expiry (ended ones included, see endSession); answers how many. */
export async function deleteSpentSessions(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('signin_sessions').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/**
 * The keys of `alg` that have not stopped signing, in the order they sign: the first signs now;
 * any later one was made by a rotation and is published ahead of the moment it takes over.
 */
export async function liveSigningKeys(db: Db, alg: string, now: string): Promise<SigningKeyRow[]> {
  return (
    db
      .selectFrom('signing_keys')
      .selectAll()
      .where('alg', '=', alg)
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now)]))
      // Keys a rotation scheduled to stop come first, soonest first; then the one no rotation has
      // touched yet. Not by creation time: a rotation in the same millisecond as the first key
      // would tie with it.
      .orderBy(sql`retired_at is null`)
      .orderBy('retired_at')
      .orderBy('created_at')
      .orderBy('kid')
      .execute()
  )
}

/** Adds a signing key; false when another process made the current key for its algorithm first. */
export async function insertSigningKey(db: Db, row: SigningKeyRow): Promise<boolean> {
  const result = await db
    .insertInto('signing_keys')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst()
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
}

/** Every key jwks_uri publishes: the current ones, and retired ones whose ID tokens may still be live. */
export async function publishedSigningKeys(db: Db, now: string): Promise<SigningKeyRow[]> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('publish_until', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('kid')
    .execute()
}

/**
 * Schedules every key still signing at `switchAt` to stop then, published until `publishUntil`;
 * answers their ids. A key already due to stop earlier keeps its time.
 */
export async function retireSigningKeys(db: Db, switchAt: string, publishUntil: string): Promise<string[]> {
  const rows = await db
    .updateTable('signing_keys')
    .set({retired_at: switchAt, publish_until: publishUntil})
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', switchAt)]))
    .returning('kid')
    .execute()
  return rows.map((row) => row.kid)
}

/** Drops retired keys no ID token can need any more. */
export async function deleteUnpublishedKeys(db: Db, now: string): Promise<void> {
  await db.deleteFrom('signing_keys').where('publish_until', '<=', now).execute()
}

/** A client as the applications page shows it, unless it expired (its grants are then void). */
export async function applicationClient(db: Db, clientId: string): Promise<{client_id: string; name: string; url: string; logo_url: string} | undefined> {
  return db.selectFrom('clients').select(['id as client_id', 'name', 'url', 'logo_url']).where('id', '=', clientId).where('expired_at', 'is', null).executeTakeFirst()
}

export async function insertPushedRequest(db: Db, row: Insertable<PushedRequestTable>, now: string): Promise<void> {
  await writeTransaction(db, async (trx) => {
    // Spent and forgotten requests go now and then: a day after they were made.
    if (Math.random() < 0.02)
      await trx
        .deleteFrom('pushed_requests')
        .where('created_at', '<', iso(new Date(Date.parse(now) - 86_400_000)))
        .execute()
    await trx.insertInto('pushed_requests').values(row).execute()
  })
}

export async function findPushedRequest(db: Db, idHash: string): Promise<PushedRequestRow | undefined> {
  return db.selectFrom('pushed_requests').selectAll().where('id_hash', '=', idHash).executeTakeFirst()
}

export async function markPushedRequest(db: Db, idHash: string, changes: {opened_at?: string; signed_in_at?: string}): Promise<void> {
  await db.updateTable('pushed_requests').set(changes).where('id_hash', '=', idHash).execute()
}

/** Spends a pushed request; false when its answer already went back (it was used). */
export async function spendPushedRequest(db: Db, idHash: string, now: string): Promise<boolean> {
  const result = await db.updateTable('pushed_requests').set({used_at: now}).where('id_hash', '=', idHash).where('used_at', 'is', null).executeTakeFirst()
  return (result.numUpdatedRows ?? 0n) > 0n
}
