import type {StoreParts} from '../../store/database.js'
import {createHash} from 'node:crypto'
import {SignJWT} from 'jose'
import {signonConfig} from './config.js'
import {AppError, type ErrorCode} from '../../errors.js'
import type {LiveToken} from '../../grants/service.js'
import type {SignonDb as Db} from './tables.js'
import {isIdTokenAlg, signingKey} from './signing-keys.js'

/**
 * OpenID Connect Core on top of the OAuth server: scope `openid` on an authorization request turns
 * it on for that request, and only then are the parameters below read and an ID token issued. A
 * request without `openid` is handled exactly as before.
 */

/** The scope that turns OpenID Connect on, and the one that adds the e-mail claims. */
export const OPENID = 'openid'
export const OIDC_SCOPES = [OPENID, 'email'] as const

/**
 * What each scope lets a relying party read about the member, in the ID token and at UserInfo.
 * `profile` is what member info has always shared, under OpenID's standard names plus the
 * community's own two fields; nothing else of the member (NPI, ME number) is ever a claim.
 */
export const SCOPE_CLAIMS: Record<string, string[]> = {
  profile: ['name', 'given_name', 'family_name', 'country_of_practice', 'primary_specialty'],
  email: ['email', 'email_verified'],
}

/** Every claim medpanel may put in an ID token or a UserInfo answer (the discovery document lists them). */
export const CLAIMS_SUPPORTED = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'sid', ...Object.values(SCOPE_CLAIMS).flat()]

/** The member's claims (ID token and UserInfo), as far as the scopes allow. */
export interface MemberClaims {
  sub: string
  name?: string
  given_name?: string
  family_name?: string
  country_of_practice?: string
  primary_specialty?: string
  email?: string
  email_verified?: boolean
}

export interface ClaimsMember {
  id: number
  first_name: string
  last_name: string
  country: string
  specialty: string
  email: string
}

/**
 * The member's claims a set of scopes allows. `sub` is the member id, the same for every client
 * (a public subject): token info and introspection already give every client that id, so a
 * pairwise one would hide nothing. `email_verified` is false: medpanel never confirms an address
 * (an operator enters it), and a relying party must not treat it as proven.
 */
export function memberClaims(member: ClaimsMember, scopes: readonly string[]): MemberClaims {
  const claims: MemberClaims = {sub: String(member.id)}
  if (scopes.includes('profile')) {
    claims.name = `${member.first_name} ${member.last_name}`
    claims.given_name = member.first_name
    claims.family_name = member.last_name
    claims.country_of_practice = member.country
    claims.primary_specialty = member.specialty
  }
  if (scopes.includes('email')) {
    claims.email = member.email
    claims.email_verified = false
  }
  return claims
}

/** The left half of the access token's SHA-256, base64url (Core §3.1.3.6; RS256 and ES256 both hash with SHA-256). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url')
}

export interface IdTokenInput {
  issuer: string
  clientId: string
  alg: string
  member: ClaimsMember
  scopes: readonly string[]
  nonce: string | null
  /** When the member signed in, as stored (ISO 8601). */
  authTime: string | null
  /** The sign-in session's sid (back-channel logout), or null for a session begun before sids. */
  sid: string | null
  accessToken: string
  now: Date
}

/** The key that signs a client's tokens now, for the algorithm it registered (RS256 unless told). */
async function clientSigningKey(store: StoreParts<Db>, registered: string, now: Date) {
  const alg = isIdTokenAlg(registered) ? registered : 'RS256'
  return {alg, key: await signingKey(store, alg, now)}
}

/** A signed ID token for the member, valid signonConfig.idTokenSeconds. */
export async function issueIdToken(store: StoreParts<Db>, input: IdTokenInput): Promise<string> {
  const {alg, key} = await clientSigningKey(store, input.alg, input.now)
  const iat = Math.floor(input.now.getTime() / 1000)
  const claims: Record<string, unknown> = {
    ...memberClaims(input.member, input.scopes),
    at_hash: accessTokenHash(input.accessToken),
  }
  if (input.authTime !== null) claims.auth_time = Math.floor(Date.parse(input.authTime) / 1000)
  if (input.nonce !== null) claims.nonce = input.nonce
  if (input.sid !== null) claims.sid = input.sid
  return new SignJWT(claims)
    .setProtectedHeader({alg, kid: key.kid, typ: 'JWT'})
    .setIssuer(input.issuer)
    .setAudience(input.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + signonConfig.idTokenSeconds)
    .sign(key.key)
}

/** The event a logout token carries (Back-Channel Logout §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

export interface LogoutTokenInput {
  issuer: string
  clientId: string
  /** The client's ID-token algorithm: its logout tokens are signed alike, with the same keys. */
  alg: string
  sub: string
  /** The ended session; null for a token naming the member alone (several sessions ended together). */
  sid: string | null
  /** The delivery's id: the same on every retry, so the client can drop a duplicate. */
  jti: string
  now: Date
}

/**
 * A logout token (OpenID Connect Back-Channel Logout 1.0 §2.4): the member's session `sid` at
 * this issuer ended. Typed `logout+jwt` and without a nonce, so no client can take it for an ID
 * token; valid signonConfig.backchannelLogout.tokenSeconds.
 */
export async function issueLogoutToken(store: StoreParts<Db>, input: LogoutTokenInput): Promise<string> {
  const {alg, key} = await clientSigningKey(store, input.alg, input.now)
  const iat = Math.floor(input.now.getTime() / 1000)
  return new SignJWT({...(input.sid === null ? {} : {sid: input.sid}), events: {[BACKCHANNEL_LOGOUT_EVENT]: {}}})
    .setProtectedHeader({alg, kid: key.kid, typ: 'logout+jwt'})
    .setIssuer(input.issuer)
    .setAudience(input.clientId)
    .setSubject(input.sub)
    .setJti(input.jti)
    .setIssuedAt(iat)
    .setExpirationTime(iat + signonConfig.backchannelLogout.tokenSeconds)
    .sign(key.key)
}

/** The `prompt` values medpanel acts on (Core §3.1.2.1); `select_account` is read as `login`. */
export type Prompt = 'none' | 'login' | 'consent'

export interface OidcRequest {
  nonce: string | null
  prompt: Set<Prompt>
  /** Seconds: a sign-in older than this must be made again. */
  maxAge: number | null
  loginHint: string | undefined
}

export interface OidcParams {
  nonce?: string | undefined
  prompt?: string | undefined
  max_age?: string | undefined
  login_hint?: string | undefined
  request?: string | undefined
  request_uri?: string | undefined
}

/**
 * Reads the OpenID parameters of an authorization request whose client and redirect URI are
 * already proven; `back` makes the redirect that carries an error to the client.
 */
export function readOidcRequest(params: OidcParams, back: (error: ErrorCode, description: string) => AppError): OidcRequest {
  if (params.request !== undefined) throw back('request_not_supported', 'request objects are not supported; send the parameters in the query')
  if (params.request_uri !== undefined)
    throw back('request_uri_not_supported', 'request_uri is only for pushed authorization requests (PAR); send the parameters in the query, or push them')
  const prompt = new Set<Prompt>()
  for (const value of (params.prompt ?? '').split(' ').filter(Boolean)) {
    if (value === 'none' || value === 'login' || value === 'consent') prompt.add(value)
    else if (value === 'select_account') prompt.add('login')
    else throw back('invalid_request', `prompt ${JSON.stringify(value.slice(0, 32))} is not one of none, login, consent, select_account`)
  }
  if (prompt.has('none') && prompt.size > 1) throw back('invalid_request', 'prompt=none cannot be combined with another prompt value')
  let maxAge: number | null = null
  if (params.max_age !== undefined) {
    if (!/^\d{1,9}$/.test(params.max_age)) throw back('invalid_request', 'max_age must be a whole number of seconds')
    maxAge = Number(params.max_age)
  }
  return {nonce: params.nonce ?? null, prompt, maxAge, loginHint: params.login_hint}
}

/**
 * Whether a sign-in that began at `signedInAt` does for this request: not when the client asked
 * for a fresh one (prompt=login) or the sign-in is older than max_age.
 */
export function signInSuffices(request: OidcRequest, signedInAt: string, now: Date): boolean {
  if (request.prompt.has('login')) return false
  if (request.maxAge === null) return true
  return (now.getTime() - Date.parse(signedInAt)) / 1000 <= request.maxAge
}

/**
 * The UserInfo answer for a token (Core §5.3): the claims its scopes allow. Only a member's token
 * issued with `openid` may ask; anything else is refused as RFC 6750 says.
 */
export function userInfo(token: LiveToken): MemberClaims {
  if (!token.member || token.memberId === null) {
    const why = 'The access token does not act for a member'
    throw new AppError('invalid_token', why, {challenge: {scheme: 'Bearer', error: 'invalid_token'}})
  }
  if (!token.scopes.includes(OPENID)) {
    const why = 'The access token was not issued with the openid scope'
    throw new AppError('insufficient_scope', why, {challenge: {scheme: 'Bearer', error: 'insufficient_scope', scope: OPENID}})
  }
  return memberClaims({id: token.memberId, ...token.member}, token.scopes)
}
