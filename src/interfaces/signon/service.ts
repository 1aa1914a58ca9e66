import type {Kysely} from 'kysely'
import {AppError, type ErrorCode, isClientError} from '../../errors.js'
import {type Clock, iso} from '../../lib/clock.js'
import {decoyHash, hashPassword, needsRehash, sha256, verifyPassword} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import {findClient, findMember, findMemberByEmail, updateMemberRow} from '../../registry/repository.js'
import {authenticateClient, getClientRow, getMemberRow, hasGrant} from '../../registry/service.js'
import {guardPasswordCheck} from '../../registry/throttle.js'
import type {Client, MemberRow} from '../../registry/tables.js'
import {readerOf, writeTransaction} from '../../store/db.js'
import {metricsOf} from '../../store/context.js'
import type {Database, Db} from '../../store/database.js'
import {isValidChallenge, isValidVerifier, verifierMatches} from './pkce.js'
import * as grants from '../../grants/repository.js'
import {resolveToken, type LiveToken} from '../../grants/service.js'
import * as repo from './repository.js'
import {readOwnIdToken} from './signing-keys.js'
import {config} from '../../config.js'
import {issueIdToken, OIDC_SCOPES, OPENID, type OidcParams, type OidcRequest, readOidcRequest} from './oidc.js'

/** Authorization codes live ten minutes (config.ts says why), and only until first use. */
export const CODE_TTL_SECONDS = config.signon.codeTtlSeconds
/** A sign-in on the consent page lasts a working day. */
export const SESSION_SECONDS = config.signon.sessionSeconds
export const MEMBER_SCOPES = ['profile'] as const
/** What a client may ask a member for: the profile, and with OpenID Connect, who they are and their e-mail. */
export const AUTHORIZE_SCOPES: readonly string[] = [...MEMBER_SCOPES, ...OIDC_SCOPES]
export const CLIENT_SCOPES = ['pulses'] as const

const invalidGrant = (why: string) => new AppError('invalid_grant', why)
const invalidRequest = (why: string) => new AppError('invalid_request', why)

/** The query of GET /oauth/authorize (also posted back by the consent form). */
export interface AuthorizeRequest extends OidcParams {
  client_id: string
  redirect_uri: string
  response_type?: string | undefined
  state?: string | undefined
  scope?: string | undefined
  code_challenge?: string | undefined
  code_challenge_method?: string | undefined
}

export interface CheckedAuthorizeRequest {
  client: Client
  redirectUri: string
  state: string | undefined
  scopes: string[]
  codeChallenge: string | null
  /** The OpenID Connect part, when the scopes include `openid`; null for a plain OAuth request. */
  oidc: OidcRequest | null
}

/** Appends OAuth parameters to a redirect URI, keeping its own query intact. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(key, value)
  return url.toString()
}

/**
 * Checks an authorize request. Until client and redirect URI are proven, failures are errors for
 * the user's eyes (never a redirect: RFC 6749 §4.1.2.1); after that, failures go back to the
 * client as a redirect carrying `error`, `error_description` and `state`.
 */
export async function checkAuthorizeRequest(db: Db, req: AuthorizeRequest): Promise<CheckedAuthorizeRequest> {
  const client = req.client_id ? await findClient(db, req.client_id) : undefined
  if (!client) throw invalidRequest('unknown client_id: this application is not registered')
  if (client.expired_at !== null) throw new AppError('unauthorized_client', "this application's account has expired")
  const registered = client.redirect_uris
  // Exact, byte-for-byte comparison: no prefix, pattern or normalisation.
  if (!req.redirect_uri || !registered.includes(req.redirect_uri)) {
    throw invalidRequest('redirect_uri does not match any URI registered for this application')
  }
  const back = (error: ErrorCode, description: string) =>
    new AppError(error, description, {location: redirectWith(req.redirect_uri, {error, error_description: description, state: req.state})})

  if (!hasGrant(client, 'signon')) throw back('unauthorized_client', 'this client may not use the authorization code flow')
  if (req.response_type !== 'code') throw back('unsupported_response_type', 'response_type must be code')
  const scopes = req.scope ? req.scope.split(' ').filter(Boolean) : [...MEMBER_SCOPES]
  const unknown = scopes.filter((s) => !AUTHORIZE_SCOPES.includes(s))
  if (unknown.length > 0) throw back('invalid_scope', `unknown scope: ${unknown.join(' ')}`)
  const oidc = scopes.includes(OPENID) ? readOidcRequest(req, back) : null
  let codeChallenge: string | null = null
  if (req.code_challenge !== undefined || req.code_challenge_method !== undefined) {
    if (req.code_challenge_method !== 'S256') throw back('invalid_request', 'code_challenge_method must be S256')
    if (!req.code_challenge || !isValidChallenge(req.code_challenge)) throw back('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)')
    codeChallenge = req.code_challenge
  }
  return {client, redirectUri: req.redirect_uri, state: req.state, scopes: [...new Set(scopes)], codeChallenge, oidc}
}

/** An error sent back to the client on the redirect, once client and redirect URI are proven. */
export function redirectError(checked: CheckedAuthorizeRequest, error: ErrorCode, description: string): AppError {
  return new AppError(error, description, {location: redirectWith(checked.redirectUri, {error, error_description: description, state: checked.state})})
}

/**
 * Checks a member's e-mail and password under the guessing limits (registry/throttle.ts). Every
 * refusal that is not a lock reads the same, an unknown e-mail, a wrong password and a right
 * password of an inactive member alike, so the form never tells a guesser which part was right.
 */
export async function signIn(db: Db, email: string, password: string, attempt: {clock: Clock; address?: string | undefined}): Promise<MemberRow> {
  const signins = metricsOf(db)?.signon.signins
  let member: MemberRow | undefined
  try {
    member = await guardPasswordCheck(db, email, attempt.address, attempt.clock, async () => {
      const found = await findMemberByEmail(db, email)
      // Verify against a decoy when the member is unknown, so timing does not reveal e-mails.
      const ok = await verifyPassword(password, found?.password_hash ?? decoyHash())
      return found && ok && found.active === 1 ? found : undefined
    })
  } catch (error) {
    // Refused by the guessing limits; a store that failed is no sign-in's outcome.
    if (isClientError(error)) signins?.failure.inc()
    throw error
  }
  if (!member) {
    signins?.failure.inc()
    throw new AppError('access_denied', 'e-mail or password is not correct', {status: 401})
  }
  signins?.success.inc()
  // A hash made with older parameters is replaced now, while the password is at hand. Not a
  // password change: tokens and sign-in sessions stay as they are.
  if (needsRehash(member.password_hash)) await updateMemberRow(db, member.id, {password_hash: await hashPassword(password)})
  return member
}
/**
 * Starts a sign-in session for the member and answers its id, for the cookie: 256 random bits,
 * new at every sign-in, stored only as its SHA-256. The session this browser presented, if any,
 * ends first (whoever it was for), so a sign-in never keeps or reuses an id the browser had before.
 * Spent sessions are swept at each sign-in, so the table holds about one row per sign-in of the
 * last SESSION_SECONDS.
 */
export async function openSession(db: Kysely<Database>, memberId: number, replacing: string | undefined, now: Date): Promise<string> {
  const id = randomToken(32)
  const stamp = iso(now)
  await writeTransaction(db, async (trx) => {
    if (replacing !== undefined) await repo.endSession(trx, sha256(replacing), stamp)
    await repo.insertSession(trx, {id_hash: sha256(id), member_id: memberId, created_at: stamp, expires_at: iso(new Date(now.getTime() + SESSION_SECONDS * 1000))})
  })
  // Its own statement, outside the transaction: two sign-ins sweeping the same rows never conflict.
  await repo.deleteSpentSessions(db, stamp)
  return id
}

/**
 * Signs every member out, in every process at once (sessions live in the store): after the store
 * key leaked, a forged cookie must find no live session to name. Answers how many ended.
 */
export async function endEverySession(db: Db, now: Date): Promise<number> {
  return repo.endEverySession(db, iso(now))
}

/** Sign-out: the session ends on the server, so a copy of its cookie kept anywhere opens nothing. */
export async function closeSession(db: Db, sessionId: string | undefined, now: Date): Promise<void> {
  if (sessionId !== undefined) await repo.endSession(db, sha256(sessionId), iso(now))
}

/** A live sign-in: the member, and when the session began (OpenID Connect's auth_time). */
export interface SignedIn {
  member: MemberRow
  signedInAt: string
}

/**
 * The member behind a sign-in cookie's session id, unless the session is unknown, ended (sign-out
 * or a later sign-in in the same browser) or past its SESSION_SECONDS, or the member's sessions
 * were ended after it began (a password change or a deactivation, even one undone since), or the
 * member left.
 */
export async function sessionMember(db: Db, sessionId: string, now: Date): Promise<SignedIn | undefined> {
  const session = await repo.findSession(db, sha256(sessionId))
  if (!session || session.ended_at !== null || session.expires_at <= iso(now)) return undefined
  const began = Date.parse(session.created_at)
  const member = await findMember(db, session.member_id)
  if (member?.active !== 1 || Date.parse(member.password_changed_at) > began) return undefined
  if (member.sessions_ended_at !== null && Date.parse(member.sessions_ended_at) >= began) return undefined
  return {member, signedInAt: session.created_at}
}

/**
 * The member allowed access: a new single-use code replaces any unused code the pair still had.
 * `signedInAt` is when the member's sign-in session began (the ID token's auth_time). Returns
 * where to send the browser.
 */
export async function allow(db: Kysely<Database>, checked: CheckedAuthorizeRequest, memberId: number, now: Date, signedInAt: string | null = null): Promise<string> {
  const code = randomToken(32)
  const stamp = iso(now)
  await writeTransaction(db, async (trx) => {
    const member = await getMemberRow(trx, memberId)
    if (member.active !== 1) throw new AppError('access_denied', 'this membership is not active', {status: 403})
    await grants.supersedeCodes(trx, memberId, checked.client.id, stamp)
    await repo.insertCode(trx, {
      code_hash: sha256(code),
      client_id: checked.client.id,
      member_id: memberId,
      redirect_uri: checked.redirectUri,
      scopes: checked.scopes.join(' '),
      code_challenge: checked.codeChallenge,
      nonce: checked.oidc?.nonce ?? null,
      auth_time: checked.oidc ? signedInAt : null,
      expires_at: iso(new Date(now.getTime() + CODE_TTL_SECONDS * 1000)),
      created_at: stamp,
    })
  })
  metricsOf(db)?.signon.codesIssued.inc()
  return redirectWith(checked.redirectUri, {code, state: checked.state})
}

export function deny(checked: CheckedAuthorizeRequest): string {
  return redirectWith(checked.redirectUri, {
    error: 'access_denied',
    error_description: 'The member denied access to their account',
    state: checked.state,
  })
}

export interface TokenResponse {
  access_token: string
  token_type: 'bearer'
  expires_in: number | null
  scope: string
  created_at: number
  /** OpenID Connect: only for a code whose request had the openid scope. */
  id_token?: string
}

async function mintToken(db: Db, client: Client, memberId: number | null, scopes: string, codeHash: string | null, now: Date): Promise<TokenResponse> {
  const token = randomToken(32)
  const expiresAt = client.token_ttl === null ? null : iso(new Date(now.getTime() + client.token_ttl * 1000))
  await grants.insertToken(db, {
    token_hash: sha256(token),
    client_id: client.id,
    member_id: memberId,
    code_hash: codeHash,
    scopes,
    expires_at: expiresAt,
    created_at: iso(now),
  })
  return {access_token: token, token_type: 'bearer', expires_in: client.token_ttl, scope: scopes, created_at: Math.floor(now.getTime() / 1000)}
}

export interface ClientCredentials {
  clientId: string
  clientSecret: string
  /** Where the request came from, for the failed-attempt throttle. */
  address?: string | undefined
}

async function requireClient(db: Db, credentials: ClientCredentials, now: Date): Promise<Client> {
  const client = await authenticateClient(db, credentials.clientId, credentials.clientSecret, {now, address: credentials.address})
  if (!client) throw new AppError('invalid_client', 'client authentication failed: unknown client or wrong secret')
  if (client.expired_at !== null) throw new AppError('invalid_client', 'client account has expired')
  return client
}

export interface CodeExchange {
  /** The issuer ID tokens name: the service's base URL. */
  issuer: string
  code: string
  redirectUri: string
  codeVerifier?: string | undefined
}

/**
 * authorization_code grant, checked in this order: client → code → owner → expiry → redirect URI
 * → PKCE → consume. The code is consumed before any token exists; presenting a used code again
 * revokes what it issued (RFC 6749 §4.1.2).
 */
export async function exchangeCode(db: Kysely<Database>, credentials: ClientCredentials, grant: CodeExchange, now: Date): Promise<TokenResponse> {
  if (grant.codeVerifier !== undefined && !isValidVerifier(grant.codeVerifier)) {
    throw invalidRequest('code_verifier must be 43 to 128 unreserved characters')
  }
  const client = await requireClient(db, credentials, now)
  if (!hasGrant(client, 'signon')) throw new AppError('unauthorized_client', 'this client may not use the authorization_code grant')
  const codeHash = sha256(grant.code)
  const stamp = iso(now)
  const outcome = await writeTransaction(db, async (trx) => {
    const code = await repo.findCode(trx, codeHash)
    if (!code || code.client_id !== client.id) return invalidGrant('authorization code is invalid or was issued to another client')
    if (code.used_at !== null) {
      await grants.revokeTokens(trx, {codeHash}, stamp)
      return invalidGrant('authorization code has already been used; tokens issued from it are now revoked')
    }
    if (code.superseded_at !== null) return invalidGrant('authorization code was replaced by a newer one or revoked')
    if (code.expires_at <= stamp) return invalidGrant('authorization code has expired')
    if (code.redirect_uri !== grant.redirectUri) return invalidGrant('redirect_uri does not match the one used to obtain the code')
    if (code.code_challenge !== null) {
      if (grant.codeVerifier === undefined) return invalidGrant('code_verifier is required for this code')
      if (!verifierMatches(grant.codeVerifier, code.code_challenge)) return invalidGrant('code_verifier does not match the code_challenge')
    } else if (grant.codeVerifier !== undefined) {
      return invalidGrant('code_verifier sent for a code that was issued without a code_challenge')
    }
    if (!(await repo.consumeCode(trx, codeHash, stamp))) return invalidGrant('authorization code has already been used')
    const member = await getMemberRow(trx, code.member_id)
    if (member.active !== 1) return invalidGrant('the member is no longer active')
    const minted = await mintToken(trx, client, code.member_id, code.scopes, codeHash, now)
    return {minted, member, nonce: code.nonce, authTime: code.auth_time}
  })
  // Errors are returned, not thrown, so the replay revocation above commits.
  if (outcome instanceof AppError) throw outcome
  metricsOf(db)?.signon.tokensIssued.authorization_code.inc()
  const {minted, member} = outcome
  const scopes = minted.scope.split(' ')
  if (!scopes.includes(OPENID)) return minted
  // Signed after the commit: making the first signing key is a write of its own.
  const idToken = await issueIdToken(db, {
    issuer: grant.issuer,
    clientId: client.id,
    alg: client.id_token_alg,
    member,
    scopes,
    nonce: outcome.nonce,
    authTime: outcome.authTime,
    accessToken: minted.access_token,
    now,
  })
  return {...minted, id_token: idToken}
}

/** client_credentials grant: a token acting for the client itself, for clients that own pulses. */
export async function exchangeClientCredentials(db: Db, credentials: ClientCredentials, scope: string | undefined, now: Date): Promise<TokenResponse> {
  const client = await requireClient(db, credentials, now)
  if (!hasGrant(client, 'pulses')) throw new AppError('unauthorized_client', 'client_credentials is only for clients with the pulses grant')
  const scopes = scope ? scope.split(' ').filter(Boolean) : [...CLIENT_SCOPES]
  const unknown = scopes.filter((s) => !(CLIENT_SCOPES as readonly string[]).includes(s))
  if (unknown.length > 0) throw new AppError('invalid_scope', `unknown scope: ${unknown.join(' ')}`)
  const minted = await mintToken(db, client, null, [...new Set(scopes)].join(' '), null, now)
  metricsOf(db)?.signon.tokensIssued.client_credentials.inc()
  return minted
}

/** The client and redirect URI an authorization code was issued for (the demo callback page). */
export async function findCodeClient(db: Db, code: string): Promise<{clientId: string; redirectUri: string} | undefined> {
  const row = await repo.findCode(readerOf(db), sha256(code))
  return row ? {clientId: row.client_id, redirectUri: row.redirect_uri} : undefined
}

/**
 * RFC 7009 revocation: the authenticated client's token dies at once (token info and member info
 * refuse it in every process on the store). A token that is unknown, already dead or another
 * client's changes nothing, and the answer is the same, so nothing is learned from it. The
 * token_type_hint is advisory (RFC 7009 §2.1) and not read: medpanel issues only access tokens,
 * so every token is looked up as one, whatever the hint says. An empty `token` names no token
 * and is answered like an unknown one: simple-oauth2's revokeAll() sends `token=` for the refresh
 * token medpanel never issued. Only a request with no `token` at all is malformed.
 */
export async function revoke(db: Db, credentials: ClientCredentials, token: string | undefined, now: Date): Promise<void> {
  const client = await requireClient(db, credentials, now)
  if (token === undefined) throw invalidRequest('token is required')
  if (token === '' || token.length > 512) return
  await writeTransaction(db, (trx) => grants.revokeTokens(trx, {tokenHash: sha256(token), clientId: client.id}, iso(now)))
}

export type Introspection = {active: false} | {active: true; scope: string; client_id: string; token_type: 'bearer'; iat: number; exp?: number; sub?: string}

/**
 * RFC 7662 introspection for the authenticated client: what a live token of its own is; for any
 * other token (unknown, expired, revoked, another client's) exactly `{"active": false}`.
 */
export async function introspect(db: Db, credentials: ClientCredentials, token: string | undefined, now: Date): Promise<Introspection> {
  const client = await requireClient(db, credentials, now)
  if (!token) throw invalidRequest('token is required')
  const live = await resolveToken(db, token, now)
  if ('dead' in live || live.clientId !== client.id) return {active: false}
  return {
    active: true,
    scope: live.scopes.join(' '),
    client_id: live.clientId,
    token_type: 'bearer',
    iat: live.createdAt,
    ...(live.expiresAt === null ? {} : {exp: live.expiresAt}),
    ...(live.memberId === null ? {} : {sub: String(live.memberId)}),
  }
}

/** An operator mints a member token directly (test scripts), as if the member had allowed. */
export async function issueToken(db: Db, memberId: number, clientId: string, now: Date, scopes: readonly string[] = MEMBER_SCOPES): Promise<TokenResponse> {
  const client = await getClientRow(db, clientId)
  if (client.expired_at !== null) throw new AppError('bad_request', `client ${clientId} has expired`)
  if (!hasGrant(client, 'signon'))
    throw new AppError('bad_request', `client ${clientId} does not have the signon grant, so it cannot hold members' tokens (update-client --grant to add it)`)
  const member = await getMemberRow(db, memberId)
  if (member.active !== 1) throw new AppError('bad_request', `member ${memberId} is not active`)
  const unknown = scopes.filter((scope) => !AUTHORIZE_SCOPES.includes(scope))
  if (unknown.length > 0) throw new AppError('bad_request', `unknown scope: ${unknown.join(' ')} (a member's token may have ${AUTHORIZE_SCOPES.join(', ')})`)
  if (scopes.length === 0) throw new AppError('bad_request', `a member's token needs at least one scope of ${AUTHORIZE_SCOPES.join(', ')}`)
  const minted = await mintToken(db, client, memberId, [...new Set(scopes)].join(' '), null, now)
  metricsOf(db)?.signon.tokensIssued.operator.inc()
  return minted
}

export interface TokenInfo {
  resource_owner_id: number | null
  scopes: string[]
  expires_in_seconds: number | null
  application: {uid: string}
  created_at: number
}

export interface AuthorizedApplication {
  client_id: string
  name: string
  url: string
  logo_url: string
  scopes: string[]
  since: string
  last_used_at: string | null
}

/**
 * Whether the member already allowed this client everything the request asks (a live token with
 * those scopes): what lets prompt=none answer with a code and no page.
 */
export async function alreadyAllowed(db: Db, memberId: number, checked: CheckedAuthorizeRequest, now: Date): Promise<boolean> {
  const allowed = (await authorizedApplications(db, memberId, now)).find((a) => a.client_id === checked.client.id)
  return allowed !== undefined && checked.scopes.every((scope) => allowed.scopes.includes(scope))
}

/** The applications a member allowed and can take back (the authorized-applications page). */
export async function authorizedApplications(db: Db, memberId: number, now: Date): Promise<AuthorizedApplication[]> {
  const rows = await repo.authorizedApplications(db, memberId, iso(now))
  return rows.map((row) => ({...row, scopes: [...new Set(row.scopes.split(/[ ,]+/).filter(Boolean))]}))
}

export function tokenInfo(token: LiveToken): TokenInfo {
  return {
    resource_owner_id: token.memberId,
    scopes: token.scopes,
    expires_in_seconds: token.expiresInSeconds,
    application: {uid: token.clientId},
    created_at: token.createdAt,
  }
}

export interface MemberInfo {
  first_name: string
  last_name: string
  country_of_practice: string
  primary_specialty: string
}

export function memberInfo(token: LiveToken): MemberInfo {
  // RFC 6750 §3: every refusal of a bearer token names the problem in WWW-Authenticate too.
  if (!token.member) {
    throw new AppError('invalid_token', 'The access token does not act for a member', {challenge: {scheme: 'Bearer', error: 'invalid_token'}})
  }
  if (!token.scopes.includes('profile')) {
    throw new AppError('insufficient_scope', 'The access token lacks the profile scope', {challenge: {scheme: 'Bearer', error: 'insufficient_scope', scope: 'profile'}})
  }
  return {
    first_name: token.member.first_name,
    last_name: token.member.last_name,
    country_of_practice: token.member.country,
    primary_specialty: token.member.specialty,
  }
}

export interface LogoutRequest {
  id_token_hint?: string | undefined
  post_logout_redirect_uri?: string | undefined
  state?: string | undefined
  client_id?: string | undefined
}

/**
 * Checks an RP-initiated logout request (OpenID Connect RP-Initiated Logout 1.0): the client the
 * hint (or client_id) names, the member the hint names, and where the browser may go afterwards,
 * only to a URI registered for that client. Anything unproven is invalid_request; nothing ends.
 */
export async function checkLogoutRequest(
  db: Db,
  params: LogoutRequest,
  issuer: string,
  now: Date,
): Promise<{client: Client | undefined; subject: unknown; destination: string | undefined}> {
  let client: Client | undefined
  let subject: unknown
  if (params.id_token_hint !== undefined) {
    const claims = await readOwnIdToken(db, params.id_token_hint, issuer, now)
    if (!claims) throw invalidRequest('id_token_hint is not an ID token this service issued')
    const audience = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud
    if (params.client_id !== undefined && params.client_id !== audience) throw invalidRequest("client_id is not the ID token's audience")
    client = typeof audience === 'string' ? await findClient(db, audience) : undefined
    subject = claims.sub
  } else if (params.client_id !== undefined) {
    client = await findClient(db, params.client_id)
    if (!client) throw invalidRequest('unknown client_id')
  }
  let destination: string | undefined
  if (params.post_logout_redirect_uri !== undefined) {
    if (!client) throw invalidRequest('post_logout_redirect_uri needs an id_token_hint or a client_id to say whose it is')
    if (!client.post_logout_redirect_uris.includes(params.post_logout_redirect_uri)) {
      throw invalidRequest('post_logout_redirect_uri is not registered for this application')
    }
    destination = redirectWith(params.post_logout_redirect_uri, {state: params.state})
  }
  return {client, subject, destination}
}
