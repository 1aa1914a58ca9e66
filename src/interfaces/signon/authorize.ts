import type {Kysely} from 'kysely'
import {narrow, type StoreParts} from '../../store/database.js'
import {signonConfig} from './config.js'
import {AppError, type ClientReturn, type ErrorCode} from '../../errors.js'
import * as grants from '../../grants/repository.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import {findClient} from '../../registry/repository.js'
import {getMemberRow, hasGrant} from '../../registry/service.js'
import type {Client} from '../../registry/tables.js'
import {namesPortZero} from '../../registry/schema.js'
import type {Metrics} from '../../metrics/metrics.js'
import {writeTransaction} from '../../store/transactions.js'
import type {SignonView as Database, SignonDb as Db} from './tables.js'
import {OPENID, type OidcParams, type OidcRequest, readOidcRequest} from './oidc.js'
import {readResource} from './jwt-access-tokens.js'
import {isValidChallenge} from './pkce.js'
import {PUSHABLE, type PushedParams, REQUEST_URI_PREFIX, resolvePushedRequest, storePushedRequest} from './pushed-requests.js'
import {type ClientCredentials, isPublicClient, requireClient} from './client-auth.js'
import * as repo from './repository.js'
import {AUTHORIZE_SCOPES, MEMBER_SCOPES, OFFLINE_ACCESS, scopeList} from './scopes.js'
import {grantMetrics} from '../../grants/metrics.js'
import {readResponseMode, type ResponseMode} from './authorization-response.js'

/** Authorization codes live ten minutes (config.ts says why), and only until first use. */
export const CODE_TTL_SECONDS = signonConfig.codeTtlSeconds

/** The query of GET /oauth/authorize (also posted back by the consent form). */
export interface AuthorizeRequest extends OidcParams {
  client_id: string
  redirect_uri: string
  response_type?: string | undefined
  /** query (the default) or form_post: how the answer goes back (authorization-response.ts). */
  response_mode?: string | undefined
  state?: string | undefined
  scope?: string | undefined
  code_challenge?: string | undefined
  code_challenge_method?: string | undefined
  /** RFC 9449 §10: the thumbprint of the DPoP key the code is to be bound to. */
  dpop_jkt?: string | undefined
  /** RFC 8707: the resource server the access token is for. */
  resource?: string | undefined
}

export interface CheckedAuthorizeRequest {
  client: Client
  redirectUri: string
  /** How the answer, a code or an error, goes back to the client. */
  responseMode: ResponseMode
  state: string | undefined
  scopes: string[]
  codeChallenge: string | null
  /** The DPoP key the code is bound to (dpop_jkt), or null. */
  dpopJkt: string | null
  /** RFC 8707: the resource named (an absolute URI without a fragment), or null. */
  resource: string | null
  /** The OpenID Connect part, when the scopes include `openid`; null for a plain OAuth request. */
  oidc: OidcRequest | null
  /** A pushed request (RFC 9126) the browser named by its request_uri: its key, to spend it by. */
  pushed?: string
}

const invalidRequest = (why: string) => new AppError('invalid_request', why)

/** A JWK SHA-256 thumbprint (RFC 7638), base64url: what dpop_jkt names. */
const JWK_THUMBPRINT = /^[A-Za-z0-9_-]{43}$/

/**
 * Checks an authorize request. Until client and redirect URI are proven, failures are errors for
 * the user's eyes (never a redirect: RFC 6749 §4.1.2.1); after that, failures go back to the
 * client as a redirect carrying `error`, `error_description` and `state`.
 */
export async function checkAuthorizeRequest(db: Db, given: AuthorizeRequest, now: Date, options: {pushing?: boolean} = {}): Promise<CheckedAuthorizeRequest> {
  let req = given
  let pushed: string | undefined
  if (options.pushing && given.request_uri !== undefined) throw invalidRequest('request_uri cannot be pushed: push the parameters themselves')
  if (!options.pushing && given.request_uri?.startsWith(REQUEST_URI_PREFIX) && given.request === undefined) {
    // A pushed request: its stored parameters are the request; only client_id must agree.
    if (!given.client_id) throw invalidRequest('client_id is required with request_uri')
    const resolved = await resolvePushedRequest(db, given.client_id, given.request_uri, now)
    req = resolved.request
    pushed = resolved.idHash
  }
  const client = req.client_id ? await findClient(narrow(db), req.client_id) : undefined
  if (!client) throw invalidRequest('unknown client_id: this application is not registered')
  if (client.expired_at !== null) throw new AppError('unauthorized_client', "this application's account has expired")
  if (!req.redirect_uri || !redirectMatches(client, req.redirect_uri)) {
    throw invalidRequest('redirect_uri does not match any URI registered for this application')
  }
  // Read first, so every later refusal goes back the way the client asked; a mode medpanel does
  // not have is itself refused in the default one (query).
  const responseMode = readResponseMode(req.response_mode)
  const back = (error: ErrorCode, description: string) =>
    new AppError(error, description, {
      clientReturn: {redirectUri: req.redirect_uri, mode: responseMode ?? 'query', params: {error, error_description: description, state: req.state}},
    })
  if (responseMode === undefined) throw back('invalid_request', 'response_mode must be query or form_post: medpanel answers with a code, never in a fragment')

  if (!hasGrant(client, 'signon')) throw back('unauthorized_client', 'this client may not use the authorization code flow')
  // A request object by reference (OpenID Connect's request_uri) is not taken; a pushed request's is (above).
  if (req.request_uri !== undefined)
    throw back('request_uri_not_supported', 'request_uri is only for pushed authorization requests (PAR); send the parameters in the query, or push them')
  if (client.require_pushed_authorization_requests === 1 && pushed === undefined && !options.pushing) {
    throw back('invalid_request', 'this application must push its authorization requests first (PAR, RFC 9126): its request cannot come through the browser')
  }
  if (req.response_type !== 'code') throw back('unsupported_response_type', 'response_type must be code')
  const asked = req.scope ? scopeList(req.scope) : [...MEMBER_SCOPES]
  const scopes = grantableScopes(asked)
  if (scopes === undefined) throw back('invalid_scope', `unknown scope: ${asked.filter((s) => !AUTHORIZE_SCOPES.includes(s)).join(' ')}`)
  const oidc = scopes.includes(OPENID) ? readOidcRequest(req, back) : null
  let codeChallenge: string | null = null
  if (req.code_challenge !== undefined || req.code_challenge_method !== undefined) {
    if (req.code_challenge_method !== 'S256') throw back('invalid_request', 'code_challenge_method must be S256')
    if (!req.code_challenge || !isValidChallenge(req.code_challenge)) throw back('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)')
    codeChallenge = req.code_challenge
  }
  // A public client has no secret: PKCE is what stops a stolen code (RFC 9700 §2.1.1).
  if (codeChallenge === null && isPublicClient(client)) throw back('invalid_request', 'code_challenge (PKCE, S256) is required for a public client')
  if (req.dpop_jkt !== undefined && !JWK_THUMBPRINT.test(req.dpop_jkt)) throw back('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint (43 characters)')
  const dpopJkt = req.dpop_jkt ?? null
  const resource = resourceOrBack(req.resource, back)
  return {client, redirectUri: req.redirect_uri, responseMode, state: req.state, scopes, codeChallenge, dpopJkt, resource, oidc, ...(pushed === undefined ? {} : {pushed})}
}

/** The request's resource (RFC 8707), or its refusal sent back to the client. */
function resourceOrBack(value: string | undefined, back: (error: ErrorCode, description: string) => AppError): string | null {
  try {
    return readResource(value)
  } catch (error) {
    if (error instanceof AppError) throw back('invalid_target', error.message)
    throw error
  }
}

/**
 * A pushed authorization request (RFC 9126): the client proves itself as at the token endpoint,
 * and its parameters are checked as the authorize page will check them, so a request refused
 * there is refused now, as JSON to the client (an error meant for a redirect loses its
 * location). Answers the one-time request_uri. A DPoP proof sent with the push (its key's
 * thumbprint: `proofJkt`) binds the code to that key, as dpop_jkt would (RFC 9449 §10.1).
 */
export async function pushAuthorizationRequest(
  store: StoreParts<Db>,
  credentials: ClientCredentials,
  form: Partial<Record<(typeof PUSHABLE)[number] | 'request' | 'request_uri', string | undefined>>,
  now: Date,
  proofJkt: string | null = null,
): Promise<{request_uri: string; expires_in: number}> {
  const client = await requireClient(store, credentials, now)
  if (form.request !== undefined) throw invalidRequest('request objects are not supported: push the parameters themselves')
  const params = Object.fromEntries(PUSHABLE.flatMap((name) => (form[name] === undefined ? [] : [[name, form[name]]]))) as PushedParams
  if (proofJkt !== null) {
    if (params.dpop_jkt !== undefined && params.dpop_jkt !== proofJkt)
      throw new AppError('invalid_dpop_proof', 'dpop_jkt is not the thumbprint of the key of the DPoP proof sent with it')
    params.dpop_jkt = proofJkt
  }
  try {
    await checkAuthorizeRequest(store.db, {...params, client_id: client.id, redirect_uri: params.redirect_uri ?? '', request_uri: form.request_uri}, now, {pushing: true})
  } catch (error) {
    if (error instanceof AppError && error.clientReturn !== undefined) throw new AppError(error.code, error.message)
    throw error
  }
  return storePushedRequest(store.db, client, params, now)
}

/**
 * The scopes a request may be granted, or undefined when a plain OAuth request names one medpanel
 * does not know (invalid_scope, as always). An OpenID request is read as Core §3.1.2.1 says: an
 * unknown value is ignored and left out of the grant, and offline_access asks for a refresh token.
 */
function grantableScopes(asked: string[]): string[] | undefined {
  if (asked.includes(OPENID)) return asked.filter((scope) => AUTHORIZE_SCOPES.includes(scope) || scope === OFFLINE_ACCESS)
  return asked.every((scope) => AUTHORIZE_SCOPES.includes(scope)) ? asked : undefined
}

/**
 * Whether a redirect URI is one the client registered: byte for byte, with no prefix, pattern or
 * normalisation. One exception, for public clients (native apps, RFC 8252 §7.3): a registered
 * loopback IP address (http://127.0.0.1 or http://[::1]) matches on any port, since the app
 * listens on whatever port the system gives it.
 */
export function redirectMatches(client: Client, uri: string): boolean {
  return uriListed(client.redirect_uris, uri, isPublicClient(client))
}

/**
 * Whether `uri` is one of `listed`, byte for byte; with `anyLoopbackPort`, a listed loopback IP
 * address (http://127.0.0.1 or http://[::1]) matches on any port. Never a URI on port 0, which
 * registration refuses and nothing listens on, even one an earlier release stored.
 */
export function uriListed(listed: readonly string[], uri: string, anyLoopbackPort: boolean): boolean {
  if (namesPortZero(uri)) return false
  if (listed.includes(uri)) return true
  if (!anyLoopbackPort || !URL.canParse(uri)) return false
  const asked = new URL(uri)
  if (asked.protocol !== 'http:' || (asked.hostname !== '127.0.0.1' && asked.hostname !== '[::1]')) return false
  return listed.some((registered) => {
    if (!URL.canParse(registered)) return false
    const candidate = new URL(registered)
    if (candidate.protocol !== 'http:' || candidate.hostname !== asked.hostname) return false
    candidate.port = asked.port
    return candidate.href === uri
  })
}

/** An authorization response to `checked`, in the response mode it asked for. */
function answer(checked: CheckedAuthorizeRequest, params: Record<string, string | undefined>): ClientReturn {
  return {redirectUri: checked.redirectUri, mode: checked.responseMode, params}
}

/** An error sent back to the client, once client and redirect URI are proven. */
export function redirectError(checked: CheckedAuthorizeRequest, error: ErrorCode, description: string): AppError {
  return new AppError(error, description, {clientReturn: answer(checked, {error, error_description: description, state: checked.state})})
}

/**
 * The member allowed access: a new single-use code replaces any unused code the pair still had.
 * `session` is the member's sign-in session: when it began (the ID token's auth_time) and its sid.
 * The code is counted in `metrics`, the serving app's registry. Returns the answer for the client.
 */
export async function allow(
  db: Kysely<Database>,
  checked: CheckedAuthorizeRequest,
  memberId: number,
  now: Date,
  session: {signedInAt: string; sid: string | null} | null = null,
  metrics?: Metrics,
): Promise<ClientReturn> {
  const code = randomToken(32)
  const stamp = iso(now)
  await writeTransaction(db, async (trx) => {
    const member = await getMemberRow(narrow(trx), memberId)
    if (member.active !== 1) throw new AppError('access_denied', 'this membership is not active', {status: 403})
    // A pushed request is answered once: its code and its spending stand or fall together.
    if (checked.pushed !== undefined && !(await repo.spendPushedRequest(trx, checked.pushed, stamp))) {
      throw new AppError('invalid_request', 'this authorization request was answered already: a request_uri is used once')
    }
    await grants.supersedeCodes(narrow(trx), memberId, checked.client.id, stamp)
    // Remembered, so the next sign-in for no more than this skips the consent page.
    await grants.rememberConsent(narrow(trx), memberId, checked.client.id, checked.scopes, stamp)
    await grants.insertCode(narrow(trx), {
      code_hash: sha256(code),
      client_id: checked.client.id,
      member_id: memberId,
      redirect_uri: checked.redirectUri,
      scopes: checked.scopes.join(' '),
      code_challenge: checked.codeChallenge,
      nonce: checked.oidc?.nonce ?? null,
      auth_time: checked.oidc ? (session?.signedInAt ?? null) : null,
      sid: checked.oidc ? (session?.sid ?? null) : null,
      dpop_jkt: checked.dpopJkt,
      resource: checked.resource,
      expires_at: iso(new Date(now.getTime() + CODE_TTL_SECONDS * 1000)),
      created_at: stamp,
    })
  })
  metrics?.of(grantMetrics).codesIssued.inc()
  return answer(checked, {code, state: checked.state})
}

export function deny(checked: CheckedAuthorizeRequest): ClientReturn {
  return answer(checked, {error: 'access_denied', error_description: 'The member denied access to their account', state: checked.state})
}

/** The client and redirect URI an authorization code was issued for (the demo callback page). */
export async function findCodeClient(reader: Db, code: string): Promise<{clientId: string; redirectUri: string} | undefined> {
  const row = await grants.findCode(narrow(reader), sha256(code))
  return row ? {clientId: row.client_id, redirectUri: row.redirect_uri} : undefined
}
