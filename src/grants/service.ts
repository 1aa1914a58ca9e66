import {AppError, type Challenge} from '../errors.js'
import {iso} from '../lib/clock.js'
import {sha256} from '../lib/hashing.js'
import type {StoreParts} from '../store/database.js'
import {writeTransaction} from '../store/transactions.js'
import type {GrantsDb as Db} from './tables.js'
import {grantsSchema} from './names.js'
import {fromJsonText} from '../store/json.js'
import * as repo from './repository.js'
import {config} from '../config.js'
import {checkProof, dpopRefusal} from './dpop.js'

export interface LiveToken {
  clientId: string
  clientName: string
  clientAdmin: boolean
  clientGrants: string[]
  memberId: number | null
  scopes: string[]
  expiresInSeconds: number | null
  /** When it expires, in seconds since the epoch (the stored instant, rounded down); null: never. */
  expiresAt: number | null
  createdAt: number
  /** The thumbprint of the DPoP key the token is bound to (RFC 9449 `cnf.jkt`); null: a bearer token. */
  dpopJkt: string | null
  member: {first_name: string; last_name: string; country: string; specialty: string; email: string} | null
}

/**
 * The stored hash of a presented token. A busy client presents the same token many times a
 * second, so recent answers are remembered (a bounded map, emptied when full).
 */
const recentHashes = new Map<string, string>()
function tokenHash(token: string): string {
  let hash = recentHashes.get(token)
  if (hash === undefined) {
    if (recentHashes.size >= config.caches.tokenHashes) recentHashes.clear()
    hash = sha256(token)
    recentHashes.set(token, hash)
  }
  return hash
}

/** An opaque token is 43 characters; a JWT access token (RFC 9068) signed with RS256 about 800. Longer is never ours. */
export const MAX_ACCESS_TOKEN_CHARS = 4096

/**
 * Resolves a presented bearer token to a live grant, or says why it is dead. "Live" is the spec's
 * "active": known, unexpired, unrevoked, its client not expired, its member (if any) active.
 * Only reads: the caller gives where (the store's reader, or a transaction that must see its writes).
 */
export async function resolveToken(reader: Db, token: string, now: Date): Promise<LiveToken | {dead: string}> {
  if (token.length === 0 || token.length > MAX_ACCESS_TOKEN_CHARS) return {dead: 'The access token is invalid'}
  return liveOrDead(await repo.findTokenWithOwners(reader, tokenHash(token)), now)
}

/** What a token's row (with its client and member) says of it at `now`: live, or why it is dead. */
function liveOrDead(row: TokenRow | undefined, now: Date): LiveToken | {dead: string} {
  if (!row) return {dead: 'The access token is invalid'}
  if (row.revoked_at !== null) return {dead: 'The access token was revoked'}
  const grant = grantOf(row)
  const remainingMs = grant.expiresAtMs === null ? null : grant.expiresAtMs - now.getTime()
  if (remainingMs !== null && remainingMs <= 0) return {dead: 'The access token expired'}
  if (row.client_expired_at !== null) return {dead: 'The client account has expired'}
  if (row.member_id !== null && row.member_active !== 1) return {dead: 'The member is not active'}
  // A member's token is sign-on's: it dies with the client's signon grant, as the authorize endpoint refuses such a client.
  if (row.member_id !== null && !grant.live.clientGrants.includes('signon')) return {dead: 'The client no longer has the signon grant'}
  return {...grant.live, expiresInSeconds: remainingMs === null ? null : Math.ceil(remainingMs / 1000)}
}

/** A live refresh token: what introspection tells its client of it (RFC 7662). */
export interface LiveRefreshToken {
  clientId: string
  memberId: number
  /** The whole grant the family holds. */
  scopes: string[]
  /** Seconds since the epoch. */
  createdAt: number
  /** Its idle end (never past the family's end), in seconds since the epoch: a refresh token always expires. */
  expiresAt: number
}

/**
 * Resolves a presented refresh token to its live state, or says why it is dead: "live" as for
 * access tokens (known, unexpired, unrevoked, its client not expired and still holding the signon
 * grant, its member active), and not yet spent by a refresh. Only reads.
 */
export async function resolveRefreshToken(reader: Db, token: string, now: Date): Promise<LiveRefreshToken | {dead: string}> {
  if (token.length === 0 || token.length > 512) return {dead: 'The refresh token is invalid'}
  const row = await repo.findRefreshTokenWithOwners(reader, tokenHash(token))
  if (!row) return {dead: 'The refresh token is invalid'}
  if (row.revoked_at !== null) return {dead: 'The refresh token was revoked'}
  if (row.used_at !== null) return {dead: 'The refresh token was already used'}
  if (Date.parse(row.expires_at) <= now.getTime()) return {dead: 'The refresh token expired'}
  if (row.client_expired_at !== null) return {dead: 'The client account has expired'}
  if (row.member_active !== 1) return {dead: 'The member is not active'}
  if (!fromJsonText(row.client_grants, grantsSchema, `clients.grants of ${row.client_id}`).includes('signon')) return {dead: 'The client no longer has the signon grant'}
  return {
    clientId: row.client_id,
    memberId: row.member_id,
    scopes: row.scopes.split(' ').filter(Boolean),
    createdAt: Math.floor(Date.parse(row.created_at) / 1000),
    expiresAt: Math.floor(Date.parse(row.expires_at) / 1000),
  }
}

type TokenRow = NonNullable<Awaited<ReturnType<typeof repo.findTokenWithOwners>>>

/** What a token row says once parsed, kept per row object: a remembered row is parsed once. */
const grants = new WeakMap<TokenRow, {live: Omit<LiveToken, 'expiresInSeconds'>; expiresAtMs: number | null}>()

function grantOf(row: TokenRow) {
  let grant = grants.get(row)
  if (!grant) {
    grant = {
      expiresAtMs: row.expires_at === null ? null : Date.parse(row.expires_at),
      live: {
        clientId: row.client_id,
        clientName: row.client_name,
        clientAdmin: row.client_admin === 1,
        clientGrants: fromJsonText(row.client_grants, grantsSchema, `clients.grants of ${row.client_id}`),
        memberId: row.member_id,
        scopes: row.scopes.split(' ').filter(Boolean),
        createdAt: Math.floor(Date.parse(row.created_at) / 1000),
        dpopJkt: row.dpop_jkt,
        expiresAt: row.expires_at === null ? null : Math.floor(Date.parse(row.expires_at) / 1000),
        member:
          row.member_id === null
            ? null
            : {first_name: row.first_name ?? '', last_name: row.last_name ?? '', country: row.country ?? '', specialty: row.specialty ?? '', email: row.email ?? ''},
      },
    }
    grants.set(row, grant)
  }
  return grant
}

/** When each token was last recorded as used, so a busy token writes at most every ten minutes. */
const lastNoted = new Map<string, number>()
const NOTE_EVERY_MS = config.grants.tokenUseNoteEveryMs

/**
 * Records that a token was just presented, for the member's list of allowed applications. At
 * most one write per token per ten minutes, and never in the caller's way: the write is not
 * awaited, and a failure only means a staler "last used".
 */
export function noteTokenUse(db: Db, token: string, now: Date): void {
  const hash = tokenHash(token)
  const previous = lastNoted.get(hash)
  if (previous !== undefined && now.getTime() - previous < NOTE_EVERY_MS) return
  if (lastNoted.size > config.caches.tokenUseNotes) lastNoted.clear()
  lastNoted.set(hash, now.getTime())
  void writeTransaction(db, (trx) => repo.markTokenUsed(trx, hash, iso(now))).catch(() => lastNoted.delete(hash))
}

/** RFC 6750 §3.1: a token that is expired, revoked or otherwise not live. */
const DEAD_TOKEN: Challenge = {scheme: 'Bearer', error: 'invalid_token'}

/** An access token as a request presented it, with what a DPoP proof must match (RFC 9449 §7). */
export interface PresentedToken {
  token: string
  /** The Authorization header's scheme: Bearer (RFC 6750) or DPoP (RFC 9449 §7.1). */
  scheme: 'Bearer' | 'DPoP'
  /** The request's DPoP header, if it has one. */
  proof: string | undefined
  /** The request's method and URL without its query, as the service's public address names it. */
  htm: string
  htu: string
}

/**
 * An access token as every interface that accepts one checks it (the verify of bearerTokenGuard):
 * resolved to its live grant, its proof checked if it is DPoP-bound, and, when it acts for a
 * member, noted as used. A dead one is refused with invalid_token (401), the reason it is dead as
 * the message.
 */
export async function presentToken(store: StoreParts<Db>, presented: PresentedToken, now: Date): Promise<LiveToken> {
  const live = await resolveToken(store.reader, presented.token, now)
  if ('dead' in live) throw presented.scheme === 'DPoP' ? dpopRefusal('resource', 'invalid_token', live.dead) : new AppError('invalid_token', live.dead, {challenge: DEAD_TOKEN})
  if (live.dpopJkt !== null || presented.scheme === 'DPoP') await checkPossession(store, live, presented, now)
  if (live.memberId !== null) noteTokenUse(store.db, presented.token, now)
  return live
}

/**
 * A bearer token presentToken would accept, answered from memory alone: its row remembered at the
 * store's current version (so no revocation, expiry of its client or change of its member has been
 * written since, by any process), live at `now`, and not bound to a DPoP key; noted as used as
 * presentToken notes it. Undefined in every other case, having read nothing: the caller then
 * takes presentToken's way, which reads the row and answers every refusal.
 */
export function peekLiveToken(store: StoreParts<Db>, token: string, now: Date): LiveToken | undefined {
  if (token.length === 0 || token.length > MAX_ACCESS_TOKEN_CHARS) return undefined
  const row = repo.peekTokenWithOwners(store.reader, tokenHash(token))
  if (row === undefined) return undefined
  const live = liveOrDead(row, now)
  if ('dead' in live || live.dpopJkt !== null) return undefined
  if (live.memberId !== null) noteTokenUse(store.db, token, now)
  return live
}

/**
 * A DPoP-bound token is good only with the DPoP scheme and a proof signed by its key; a bearer
 * token only with the Bearer scheme (RFC 9449 §7.1), so nobody mistakes what they hold.
 */
async function checkPossession(store: StoreParts<Db>, live: LiveToken, presented: PresentedToken, now: Date): Promise<void> {
  if (live.dpopJkt === null) throw dpopRefusal('resource', 'invalid_token', 'This access token is not bound to a DPoP key: send it with the Bearer scheme')
  if (presented.scheme !== 'DPoP') throw dpopRefusal('resource', 'invalid_token', 'This access token is bound to a DPoP key: send it as "DPoP <token>" with a DPoP proof')
  if (presented.proof === undefined) throw dpopRefusal('resource', 'invalid_dpop_proof', 'A DPoP proof is required with a DPoP-bound access token')
  // The token's digest is the one its lookup just used (remembered): ath is the same SHA-256 in base64url.
  const target = {htm: presented.htm, htu: presented.htu, ath: Buffer.from(tokenHash(presented.token), 'hex').toString('base64url')}
  const jkt = await checkProof(store, presented.proof, target, 'resource', now)
  if (jkt !== live.dpopJkt) throw dpopRefusal('resource', 'invalid_token', 'The DPoP proof is signed with another key than the one this access token is bound to')
}
