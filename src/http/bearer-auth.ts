import type {MiddlewareHandler} from 'hono'
import type {AppDeps} from '../deps.js'
import {AppError} from '../errors.js'
import {noteTokenUse, resolveToken, type LiveToken} from '../interfaces/signon/service.js'
import {bearerChallenge} from './bearer-challenge.js'
import {requestHeader} from './fast.js'
import {guarded, type Guard} from './guards.js'

declare module 'hono' {
  interface ContextVariableMap {
    token: LiveToken
  }
}

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

export interface BearerAuthOptions {
  deps: Pick<AppDeps, 'db' | 'clock'>
  /** The error to raise for a missing or dead token, in the caller's own words and code. */
  reject: (reason: string, wwwAuthenticate: string) => AppError
}


/**
 * Accepts an access token only from the Authorization header (RFC 6750 §2.1); a token in the query
 * string or a form body is refused, never read. Sets `token` for the handler.
 */
export function bearerGuard({deps, reject}: BearerAuthOptions): Guard {
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
    const token = await resolveToken(deps.db, match[1], deps.clock.now())
    if ('dead' in token) throw reject(token.dead, bearerChallenge('invalid_token', token.dead))
    // For the member's list of allowed applications ("last used").
    if (token.memberId !== null) noteTokenUse(deps.db, match[1], deps.clock.now())
    c.set('token', token)
  }
}

/** The bearer check as a middleware of its own. */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler {
  return guarded(bearerGuard(options))
}
