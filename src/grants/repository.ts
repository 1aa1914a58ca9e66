import type {InferResult, Insertable} from 'kysely'
import type {AccessTokenTable, AuthorizationCodeRow, AuthorizationCodeTable, ConsentRow, GrantsDb as Db, GrantsView, RefreshTokenRow, RefreshTokenTable} from './tables.js'
import {countByClient, type ClientHolding} from '../store/client-holding.js'
import {groupConcat} from '../store/dialect.js'
import {prepared} from '../store/prepared.js'
import {versionCache} from '../store/version-cache.js'
import {config} from '../config.js'
import type {Metrics} from '../metrics/metrics.js'
import {grantMetrics} from './metrics.js'

// The rows behind every credential the service hands out after sign-on: access tokens, refresh
// tokens, authorization codes and consents. Grants owns their tables, so every query on them is
// here. Sign-on issues them; sign-on, interface D, the registry and the operator commands (that
// end consents, members and clients) look them up and revoke them.

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
  await db.updateTable('authorization_codes').set({superseded_at: now}).where('member_id', '=', memberId).where('used_at', 'is', null).where('superseded_at', 'is', null).execute()
}

/** An authorization code as sign-on issues it (authorize.ts). */
export async function insertCode(db: Db, row: Insertable<AuthorizationCodeTable>): Promise<void> {
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

/** An access token row as sign-on inserts it. */
export type NewToken = Insertable<AccessTokenTable>

export async function insertToken(db: Db, row: NewToken): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute()
}

export interface TokenScope {
  clientId?: string
  memberId?: number
  codeHash?: string
  tokenHash?: string
}

/**
 * Revokes every live token matching all given fields; returns how many died. Counted for the
 * metrics by the grant each came from (a code's, the client's own, or an operator's issue-token),
 * as the statement runs, in the registry of the caller that has one (a request of `serve`; an
 * operator's command counts nowhere: no /metrics shows its process).
 */
export async function revokeTokens(db: Db, scope: TokenScope, now: string, metrics?: Metrics): Promise<number> {
  if (scope.clientId === undefined && scope.memberId === undefined && scope.codeHash === undefined && scope.tokenHash === undefined) {
    throw new Error('revokeTokens needs at least one field to match')
  }
  let query = db.updateTable('access_tokens').set({revoked_at: now}).where('revoked_at', 'is', null)
  if (scope.clientId !== undefined) query = query.where('client_id', '=', scope.clientId)
  if (scope.memberId !== undefined) query = query.where('member_id', '=', scope.memberId)
  if (scope.codeHash !== undefined) query = query.where('code_hash', '=', scope.codeHash)
  if (scope.tokenHash !== undefined) query = query.where('token_hash', '=', scope.tokenHash)
  // The refresh tokens of what ends go with it: a code's family, a member's or a client's. A
  // single access token (revocation of that token) leaves its family's refresh token alone.
  if (scope.tokenHash === undefined) await revokeRefreshTokens(db, {family: scope.codeHash, memberId: scope.memberId, clientId: scope.clientId}, now)
  const revoked = metrics?.of(grantMetrics).tokensRevoked
  if (!revoked) return Number((await query.executeTakeFirst()).numUpdatedRows)
  const rows = await query.returning(['member_id', 'code_hash']).execute()
  for (const row of rows) revoked[row.code_hash !== null ? 'authorization_code' : row.member_id === null ? 'client_credentials' : 'operator'].inc()
  return rows.length
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
      't.dpop_jkt',
      'c.expired_at as client_expired_at',
      'c.grants as client_grants',
      'c.admin as client_admin',
      'c.name as client_name',
      'm.active as member_active',
      'm.first_name',
      'm.last_name',
      'm.country',
      'm.specialty',
      'm.email',
    ])
    .where('t.token_hash', '=', tokenHash)
}

type TokenWithOwners = InferResult<ReturnType<typeof tokenWithOwnersQuery>>[number]
const tokenLookup = prepared(1, (db: Db, tokenHash: string) => tokenWithOwnersQuery(db, tokenHash))
/** Live rows only: an unknown token is read again each time it is presented. */
const recentTokens = versionCache<string, TokenWithOwners | undefined>(config.caches.tokenRows, (row) => row !== undefined)

/**
 * One indexed lookup that brings the token with its client and member. It runs on every
 * authenticated request, so it is prepared once (store/prepared.ts), and a row is reused while
 * the store version is unchanged (store/version-cache.ts): any write — a revocation, a password
 * change, a client expiry, in this process or another — changes the version, so a dead token is
 * never served from memory. (Time-based expiry is checked by the caller on every use.)
 */
export function findTokenWithOwners(db: Db, tokenHash: string): Promise<TokenWithOwners | undefined> {
  return recentTokens(db, tokenHash, async () => (await tokenLookup(db, tokenHash))[0])
}

/**
 * The row findTokenWithOwners would answer, if it is remembered at the store's current version
 * (the same guarantee: no write since, in this process or another); undefined otherwise, and
 * nothing is read. For token info's answer from memory (grants/service.ts peekLiveToken).
 */
export function peekTokenWithOwners(db: Db, tokenHash: string): TokenWithOwners | undefined {
  return recentTokens.peek(db, tokenHash)
}

export async function markTokenUsed(db: Db, tokenHash: string, now: string): Promise<void> {
  await db.updateTable('access_tokens').set({last_used_at: now}).where('token_hash', '=', tokenHash).execute()
}

export async function insertRefreshToken(db: Db, row: Insertable<RefreshTokenTable>): Promise<void> {
  await db.insertInto('refresh_tokens').values(row).execute()
}

export async function findRefreshToken(db: Db, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst()
}

/** A refresh token with what decides whether it is live besides its own row: its client's state and its member's. */
export async function findRefreshTokenWithOwners(db: Db, tokenHash: string) {
  return db
    .selectFrom('refresh_tokens as r')
    .innerJoin('clients as c', 'c.id', 'r.client_id')
    .innerJoin('members as m', 'm.id', 'r.member_id')
    .selectAll('r')
    .select(['c.expired_at as client_expired_at', 'c.grants as client_grants', 'm.active as member_active'])
    .where('r.token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/** Marks a refresh token used; false when another refresh got there first (a replay). */
export async function useRefreshToken(db: Db, tokenHash: string, now: string): Promise<boolean> {
  const result = await db.updateTable('refresh_tokens').set({used_at: now}).where('token_hash', '=', tokenHash).where('used_at', 'is', null).executeTakeFirst()
  return result.numUpdatedRows === 1n
}

/** Revokes every live refresh token matching all given fields (at least one); answers how many. */
export async function revokeRefreshTokens(
  db: Db,
  scope: {family?: string | undefined; memberId?: number | undefined; clientId?: string | undefined},
  now: string,
): Promise<number> {
  if (scope.family === undefined && scope.memberId === undefined && scope.clientId === undefined) throw new Error('revokeRefreshTokens needs at least one field to match')
  let query = db.updateTable('refresh_tokens').set({revoked_at: now}).where('revoked_at', 'is', null)
  if (scope.family !== undefined) query = query.where('family', '=', scope.family)
  if (scope.memberId !== undefined) query = query.where('member_id', '=', scope.memberId)
  if (scope.clientId !== undefined) query = query.where('client_id', '=', scope.clientId)
  return Number((await query.executeTakeFirst()).numUpdatedRows)
}

/** The clients a member holds a live refresh token for, with its scopes (the applications page). */
export async function liveRefreshGrants(db: Db, memberId: number, now: string): Promise<{client_id: string; scopes: string; created_at: string}[]> {
  return db
    .selectFrom('refresh_tokens')
    .select(['client_id', 'scopes', 'created_at'])
    .where('member_id', '=', memberId)
    .where('revoked_at', 'is', null)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .execute()
}

export async function findConsent(db: Db, memberId: number, clientId: string): Promise<ConsentRow | undefined> {
  return db.selectFrom('consents').selectAll().where('member_id', '=', memberId).where('client_id', '=', clientId).executeTakeFirst()
}

/** Every consent a member gave. */
export async function memberConsents(db: Db, memberId: number): Promise<ConsentRow[]> {
  return db.selectFrom('consents').selectAll().where('member_id', '=', memberId).execute()
}

/** Remembers that the member allowed these scopes, beside what they allowed the client before. */
export async function rememberConsent(db: Db, memberId: number, clientId: string, scopes: readonly string[], now: string): Promise<void> {
  const before = await findConsent(db, memberId, clientId)
  const all = [...new Set([...(before?.scopes.split(' ').filter(Boolean) ?? []), ...scopes])].join(' ')
  if (before) {
    await db.updateTable('consents').set({scopes: all, updated_at: now}).where('member_id', '=', memberId).where('client_id', '=', clientId).execute()
  } else {
    await db.insertInto('consents').values({member_id: memberId, client_id: clientId, scopes: all, created_at: now, updated_at: now}).execute()
  }
}

/** Forgets what a member allowed a client (the member or an operator took it back). */
export async function forgetConsent(db: Db, memberId: number, clientId: string): Promise<void> {
  await db.deleteFrom('consents').where('member_id', '=', memberId).where('client_id', '=', clientId).execute()
}

/** How many access tokens and authorization codes a client has, live or not (remove-client's check). */
export async function clientCredentialCounts(db: Db, clientId: string): Promise<{access_tokens: number; authorization_codes: number}> {
  return {access_tokens: await countByClient(db, 'access_tokens', clientId), authorization_codes: await countByClient(db, 'authorization_codes', clientId)}
}

/** Deletes everything grants keeps for a client: its tokens, refresh tokens, consents and codes (remove-client --force). */
export async function deleteClientCredentials(db: Db, clientId: string): Promise<void> {
  await db.deleteFrom('access_tokens').where('client_id', '=', clientId).execute()
  await db.deleteFrom('refresh_tokens').where('client_id', '=', clientId).execute()
  await db.deleteFrom('consents').where('client_id', '=', clientId).execute()
  await db.deleteFrom('authorization_codes').where('client_id', '=', clientId).execute()
}

/** What grants keeps for a client, as remove-client counts and releases it. */
export const grantsHolding: ClientHolding<GrantsView, 'access_tokens' | 'authorization_codes'> = {
  count: clientCredentialCounts,
  release: deleteClientCredentials,
}
