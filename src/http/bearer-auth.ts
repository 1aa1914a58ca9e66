import type {Context, MiddlewareHandler} from 'hono'
import type {AppError} from '../errors.js'
import type {LiveToken} from '../grants/service.js'
import {bearerChallenge} from './bearer-challenge.js'
import {requestHeader} from './fast.js'
import {guarded, type Guard} from './guards.js'

declare module 'hono' {
  interface ContextVariableMap {
    token: LiveToken
  }
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

export interface BearerTokenOptions {
  /** Resolves the presented token to its live grant, or says why it is dead. */
  verify: (token: string, c: Context) => Promise<LiveToken | {dead: string}>
  /**
   * The interface's refusal for a missing, malformed or dead token, in its own words and code;
   * `wwwAuthenticate` is the RFC 6750 §3 challenge to send with it.
   */
  reject: (reason: string, wwwAuthenticate: string) => AppError
}

/**
 * Accepts an access token only from the Authorization header (RFC 6750 §2.1); a token in the query
 * string or a form body is refused, never read. Sets `token` for the handler. A guard, so a hot
 * route can run it inside its handler (see guards.ts); `bearerToken` is the middleware form.
 */
export function bearerTokenGuard({verify, reject}: BearerTokenOptions): Guard {
  return async function requireBearer(c) {
    const header = requestHeader(c, 'authorization')
    if (header === undefined) {
      const elsewhere = c.req.query('access_token') !== undefined
      const reason = elsewhere ? 'The access token must be sent in the Authorization header' : 'An access token is required in the Authorization header'
      throw reject(reason, bearerChallenge('invalid_request', reason))
    }
    const match = BEARER.exec(header)
    if (!match?.[1]) {
      const reason = 'The Authorization header must be "Bearer <access token>"'
      throw reject(reason, bearerChallenge('invalid_request', reason))
    }
    const token = await verify(match[1], c)
    if ('dead' in token) throw reject(token.dead, bearerChallenge('invalid_token', token.dead))
    c.set('token', token)
  }
}

/** Bearer-token authentication as a middleware. */
export function bearerToken(options: BearerTokenOptions): MiddlewareHandler {
  return guarded(bearerTokenGuard(options))
}
