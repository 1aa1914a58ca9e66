import type {CompiledQuery, InferResult} from 'kysely'
import {storeVersion} from '../../store/db.js'
import type {Db} from '../../store/database.js'
import type {AuthorizationCodeRow} from './tables.js'

export async function insertCode(db: Db, row: Omit<AuthorizationCodeRow, 'used_at' | 'superseded_at'>): Promise<void> {
  await db.insertInto('authorization_codes').values(row).execute()
}

export async function findCode(db: Db, codeHash: string): Promise<AuthorizationCodeRow | undefined> {
  return db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst()
}

/** Marks the code used; false when another exchange got there first. */
export async function consumeCode(db: Db, codeHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('authorization_codes')
    .set({used_at: now})
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

/** Expires every still-unused code of a member for a client (a new allow, or a revoked consent). */
export async function supersedeCodes(db: Db, memberId: number, clientId: string, now: string): Promise<void> {
  await db
    .updateTable('authorization_codes')
    .set({superseded_at: now})
    .where('member_id', '=', memberId)
    .where('client_id', '=', clientId)
    .where('used_at', 'is', null)
    .where('superseded_at', 'is', null)
    .execute()
}

/** Expires every still-unused code of a member, whatever the client (password change, deactivation). */
export async function supersedeMemberCodes(db: Db, memberId: number, now: string): Promise<void> {
  await db
    .updateTable('authorization_codes')
    .set({superseded_at: now})
    .where('member_id', '=', memberId)
    .where('used_at', 'is', null)
    .where('superseded_at', 'is', null)
    .execute()
}

export interface NewToken {
  token_hash: string
  client_id: string
  member_id: number | null
  code_hash: string | null
  scopes: string
  expires_at: string | null
  created_at: string
}

export async function insertToken(db: Db, row: NewToken): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute()
}

export interface TokenScope {
  clientId?: string
  memberId?: number
  codeHash?: string
  tokenHash?: string
}

/** Revokes every live token matching all given fields; returns how many died. */
export async function revokeTokens(db: Db, scope: TokenScope, now: string): Promise<number> {
  if (scope.clientId === undefined && scope.memberId === undefined && scope.codeHash === undefined && scope.tokenHash === undefined) {
    throw new Error('revokeTokens needs at least one field to match')
  }
  let query = db.updateTable('access_tokens').set({revoked_at: now}).where('revoked_at', 'is', null)
  if (scope.clientId !== undefined) query = query.where('client_id', '=', scope.clientId)
  if (scope.memberId !== undefined) query = query.where('member_id', '=', scope.memberId)
  if (scope.codeHash !== undefined) query = query.where('code_hash', '=', scope.codeHash)
  if (scope.tokenHash !== undefined) query = query.where('token_hash', '=', scope.tokenHash)
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows)
}

function tokenWithOwnersQuery(db: Db, tokenHash: string) {
  return db
    .selectFrom('access_tokens as t')
    .innerJoin('clients as c', 'c.id', 't.client_id')
    .leftJoin('members as m', 'm.id', 't.member_id')
    .select([
      't.id',
      't.client_id',
      't.member_id',
      't.scopes',
      't.expires_at',
      't.revoked_at',
      't.created_at',
      'c.expired_at as client_expired_at',
      'c.grants as client_grants',
      'c.admin as client_admin',
      'c.name as client_name',
      'm.active as member_active',
      'm.first_name',
      'm.last_name',
      'm.country',
      'm.specialty',
    ])
    .where('t.token_hash', '=', tokenHash)
}

type TokenWithOwners = InferResult<ReturnType<typeof tokenWithOwnersQuery>>[number]
const compiledLookups = new WeakMap<Db, CompiledQuery<TokenWithOwners>>()

/** Recently looked-up tokens, each with the store version it was read at. */
const recent = new WeakMap<Db, Map<string, {version: number; row: TokenWithOwners}>>()
const RECENT_LIMIT = 10_000

/**
 * One indexed lookup that brings the token with its client and member. It runs on every
 * authenticated request, so the SQL is compiled once per database and reused with the new hash,
 * and a row is reused while the store version is unchanged: any write — a revocation, a password
 * change, a client expiry, in this process or another — changes the version, so a dead token is
 * never served from memory. (Time-based expiry is checked by the caller on every use.)
 */
export async function findTokenWithOwners(db: Db, tokenHash: string): Promise<TokenWithOwners | undefined> {
  // Read the version before the query: a write landing in between then only costs a re-read.
  const version = storeVersion(db)
  let cache = recent.get(db)
  if (version !== undefined) {
    const hit = cache?.get(tokenHash)
    if (hit && hit.version === version) return hit.row
  }
  let compiled = compiledLookups.get(db)
  if (!compiled) {
    compiled = tokenWithOwnersQuery(db, '').compile()
    compiledLookups.set(db, compiled)
  }
  const {rows} = await db.executeQuery<TokenWithOwners>({...compiled, parameters: [tokenHash]})
  const row = rows[0]
  if (row && version !== undefined) {
    if (!cache) recent.set(db, (cache = new Map()))
    if (cache.size >= RECENT_LIMIT) cache.clear()
    cache.set(tokenHash, {version, row})
  }
  return row
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
      eb.fn<string>('group_concat', ['t.scopes']).as('scopes'),
      eb.fn.min<string>('t.created_at').as('since'),
      eb.fn.max<string | null>('t.last_used_at').as('last_used_at'),
    ])
    .orderBy('c.name')
    .execute()
}

export async function markTokenUsed(db: Db, tokenHash: string, now: string): Promise<void> {
  await db.updateTable('access_tokens').set({last_used_at: now}).where('token_hash', '=', tokenHash).execute()
}
