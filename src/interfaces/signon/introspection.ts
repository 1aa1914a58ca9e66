import {AppError} from '../../errors.js'
import {narrow, type StoreParts} from '../../store/database.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import * as grants from '../../grants/repository.js'
import {resolveRefreshToken, resolveToken} from '../../grants/service.js'
import {writeTransaction} from '../../store/transactions.js'
import type {SignonDb as Db} from './tables.js'
import {type ClientCredentials, isPublicClient, requireClient} from './client-auth.js'
import {clientAuthFailed} from './client-auth-failure.js'
import {refreshKeyRefusal} from './refresh-tokens.js'

/**
 * RFC 7009 revocation: the authenticated client's token dies at once (token info and member info
 * refuse it in every process on the store). A refresh token takes its whole family with it: every
 * access and refresh token of the same authorization. A token that is unknown (of any length, an
 * ID token say), already dead or another client's changes nothing, and the answer is the same, so
 * nothing is learned from it. The token_type_hint is advisory (RFC 7009 §2.1) and not read: the
 * token is looked up as both kinds. An empty `token` names no token and is answered like an
 * unknown one (simple-oauth2's revokeAll() sends `token=` for a refresh token it never got). Only
 * a request with no `token` at all is malformed. A refresh token bound to a DPoP key (a public
 * client's, which anyone may name by its client_id) is revoked only with a proof of that key,
 * `proofJkt`, as a refresh needs one: without it the request is refused and nothing ends.
 */
export async function revoke(store: StoreParts<Db>, credentials: ClientCredentials, token: string | undefined, now: Date, proofJkt: string | null = null): Promise<void> {
  const client = await requireClient(store, credentials, now)
  if (token === undefined) throw new AppError('invalid_request', 'token is required')
  if (token === '') return
  const tokenHash = sha256(token)
  const stamp = iso(now)
  await writeTransaction(store.db, async (trx) => {
    const refresh = await grants.findRefreshToken(narrow(trx), tokenHash)
    if (refresh?.client_id !== client.id) return grants.revokeTokens(narrow(trx), {tokenHash, clientId: client.id}, stamp, credentials.metrics)
    // Refused before anything is written: the family lives on.
    const unproven = refreshKeyRefusal(refresh.dpop_jkt, proofJkt)
    if (unproven !== undefined) throw new AppError(proofJkt === null ? 'invalid_request' : 'invalid_dpop_proof', unproven)
    return grants.revokeTokens(narrow(trx), {codeHash: refresh.family}, stamp, credentials.metrics)
  })
}

export type Introspection =
  | {active: false}
  | {active: true; scope: string; client_id: string; token_type: 'bearer' | 'DPoP' | 'refresh_token'; iat: number; exp?: number; sub?: string; cnf?: {jkt: string}}

/**
 * RFC 7662 introspection for the authenticated client: what a live token of its own is, an access
 * token or a refresh token (as node-oidc-provider and Keycloak answer both); for any other token
 * (unknown, expired, revoked, spent, another client's) exactly `{"active": false}`. The
 * token_type_hint only says which kind to look up first (RFC 7662 §2.1): the other is looked up
 * too, so a wrong or missing hint changes nothing in the answer.
 */
export async function introspect(store: StoreParts<Db>, credentials: ClientCredentials, token: string | undefined, now: Date, hint?: string | undefined): Promise<Introspection> {
  const client = await requireClient(store, credentials, now)
  // Introspection is for a client's servers (RFC 7662 §2.1), which can keep a secret.
  // Answered as any failed authentication, so introspection cannot tell public clients apart.
  if (isPublicClient(client)) throw clientAuthFailed('a public client cannot introspect tokens', client.id)
  if (!token) throw new AppError('invalid_request', 'token is required')
  const kinds = hint === 'refresh_token' ? [describeRefreshToken, describeAccessToken] : [describeAccessToken, describeRefreshToken]
  for (const describe of kinds) {
    const answer = await describe(store.reader, token, client.id, now)
    if (answer) return answer
  }
  return {active: false}
}

/** A live access token of the client, described; undefined for anything else. */
async function describeAccessToken(reader: Db, token: string, clientId: string, now: Date): Promise<Introspection | undefined> {
  const live = await resolveToken(narrow(reader), token, now)
  if ('dead' in live || live.clientId !== clientId) return undefined
  return {
    active: true,
    scope: live.scopes.join(' '),
    client_id: live.clientId,
    token_type: live.dpopJkt === null ? 'bearer' : 'DPoP',
    iat: live.createdAt,
    ...(live.expiresAt === null ? {} : {exp: live.expiresAt}),
    ...(live.memberId === null ? {} : {sub: String(live.memberId)}),
    // RFC 9449 §6.2: the resource server checks the proof against this key.
    ...(live.dpopJkt === null ? {} : {cnf: {jkt: live.dpopJkt}}),
  }
}

/** A live refresh token of the client, described with the same fields; undefined for anything else. */
async function describeRefreshToken(reader: Db, token: string, clientId: string, now: Date): Promise<Introspection | undefined> {
  const live = await resolveRefreshToken(narrow(reader), token, now)
  if ('dead' in live || live.clientId !== clientId) return undefined
  return {
    active: true,
    scope: live.scopes.join(' '),
    client_id: live.clientId,
    token_type: 'refresh_token',
    iat: live.createdAt,
    exp: live.expiresAt,
    // No cnf: only a public client's families are bound to a DPoP key, and a public client cannot introspect.
    sub: String(live.memberId),
  }
}
