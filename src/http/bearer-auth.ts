import type {Context, MiddlewareHandler} from 'hono'
import {AppError, type Challenge} from '../errors.js'
import type {LiveToken, PresentedToken} from '../grants/service.js'
import type {CredentialCheck} from './credential-check.js'
import {requestHeader} from './fast.js'
import type {TokenEnv} from './env.js'

/** RFC 6750 §2.1's header, or RFC 9449 §7.1's: the scheme (either case), then the token68. */
const AUTHORIZATION = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i

/**
 * The one reading of an Authorization header carrying a token (RFC 6750 §2.1, RFC 9449 §7.1):
 * its scheme and token, or undefined when it is not one. Bearer auth and /metrics both use it.
 */
export function presentedCredential(header: string | undefined): {scheme: PresentedToken['scheme']; token: string} | undefined {
  const match = header === undefined ? null : AUTHORIZATION.exec(header)
  if (!match?.[2]) return undefined
  return {scheme: match[1]!.length === 4 ? 'DPoP' : 'Bearer', token: match[2]}
}

/** RFC 6750 §3.1: a request without a usable Authorization header is an invalid_request. */
const MALFORMED: Challenge = {scheme: 'Bearer', error: 'invalid_request'}

export interface BearerTokenOptions extends Pick<CredentialCheck<PresentedToken, LiveToken>, 'verify'> {
  /** The service's public origin for this request: a DPoP proof names the URL as the client called it. */
  origin: (c: Context) => string
  /**
   * The `error` every refusal's body names, for a route that has always answered with one code
   * (token info: invalid_request; member info and UserInfo: invalid_token). Without it the body
   * names the code of the refusal itself, which is what its challenge says. Every refusal is 401
   * and keeps its own challenge either way.
   */
  answerAs?: 'invalid_request' | 'invalid_token'
  /**
   * Also take the token from a form-encoded POST body's `access_token` (RFC 6750 §2.2), as OpenID
   * Connect's UserInfo must. Never from the query; never from both the header and the body.
   */
  formBody?: boolean
}

/**
 * Accepts an access token only from the Authorization header (RFC 6750 §2.1); a token in the query
 * string or a form body is refused, never read. `verify` resolves the token to its live grant or
 * throws the refusal (presentToken does both). Answers the live token: a hot route calls it first
 * in its handler and uses what it answers (see guards.ts); `bearerToken` is the middleware form,
 * which gives it to the routes behind it as the `token` variable (TokenEnv).
 */
export function bearerTokenGuard({verify, origin, answerAs, formBody = false}: BearerTokenOptions): (c: Context) => Promise<LiveToken> {
  return async function requireBearer(c) {
    const header = requestHeader(c, 'authorization')
    const inBody = formBody ? await bodyToken(c) : undefined
    if (header !== undefined && inBody !== undefined) throw malformed('Send the access token in the Authorization header or the form body, not both', answerAs)
    let presented = inBody
    let scheme: PresentedToken['scheme'] = 'Bearer'
    if (presented === undefined) {
      if (header === undefined) {
        const elsewhere = c.req.query('access_token') !== undefined
        throw malformed(elsewhere ? 'The access token must be sent in the Authorization header' : 'An access token is required in the Authorization header', answerAs)
      }
      const credential = presentedCredential(header)
      if (!credential) throw malformed('The Authorization header must be "Bearer <access token>" (or "DPoP <access token>" with a DPoP proof)', answerAs)
      scheme = credential.scheme
      presented = credential.token
    }
    let token: LiveToken
    try {
      const proof = requestHeader(c, 'dpop')
      token = await verify({token: presented, scheme, proof, htm: c.req.method, htu: `${origin(c)}${c.req.path}`}, c)
    } catch (error) {
      // Only a refusal is answered as the route says; a store failure goes on as it is.
      throw answerAs === undefined ? error : answeredAs(error, answerAs)
    }
    return token
  }
}

/** The `access_token` field of a form-encoded POST body, if it has one (RFC 6750 §2.2). */
async function bodyToken(c: Context): Promise<string | undefined> {
  if (c.req.method !== 'POST' || !/^application\/x-www-form-urlencoded\b/i.test(requestHeader(c, 'content-type') ?? '')) return undefined
  const value = (await c.req.parseBody()).access_token
  return typeof value === 'string' && value !== '' ? value : undefined
}

function malformed(reason: string, answerAs: BearerTokenOptions['answerAs']): AppError {
  return new AppError(answerAs ?? 'invalid_request', reason, {status: 401, challenge: MALFORMED})
}

function answeredAs(error: unknown, code: NonNullable<BearerTokenOptions['answerAs']>): unknown {
  if (!(error instanceof AppError) || error.status !== 401 || error.challenge?.scheme !== 'Bearer' || error.code === code) return error
  return new AppError(code, error.message, {status: 401, challenge: error.challenge, headers: error.headers})
}

/** Bearer-token authentication as a middleware: the routes behind it read `c.get('token')` (TokenEnv). */
export function bearerToken(options: BearerTokenOptions): MiddlewareHandler<TokenEnv> {
  const authenticate = bearerTokenGuard(options)
  return async function requireBearerToken(c, next) {
    c.set('token', await authenticate(c))
    await next()
  }
}
