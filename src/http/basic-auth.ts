import type {Context, MiddlewareHandler} from 'hono'
import {auth as parseBasicAuth} from 'hono/utils/basic-auth'
import type {AppError} from '../errors.js'

export interface BasicCredentials {
  username: string
  password: string
}

export interface BasicClientAuthOptions<T> {
  /** Names the protection space in the challenge (RFC 7617 §2). */
  realm: string
  /**
   * Checks the credentials: what they authenticate, or the reason they are refused. Rate limits
   * and grant checks belong here, so every refusal goes through `reject`.
   */
  verify: (credentials: BasicCredentials, c: Context) => Promise<T | {refused: string}>
  /** The interface's refusal, in its own error code; `challenge` is the WWW-Authenticate value. */
  reject: (reason: string, challenge: string) => AppError
  /** Hands what was authenticated to the handlers. */
  accept?: (c: Context, authenticated: T) => void
}

/**
 * HTTP Basic authentication (RFC 7617) of a caller against a verify callback. The header is parsed
 * by Hono's own parser; a missing or malformed header is refused before verify runs.
 */
export function basicClientAuth<T>({realm, verify, reject, accept}: BasicClientAuthOptions<T>): MiddlewareHandler {
  const challenge = `Basic realm="${realm}", charset="UTF-8"`
  return async function requireBasic(c, next) {
    const credentials = parseBasicAuth(c.req.raw)
    if (!credentials) throw reject('HTTP Basic authentication is required', challenge)
    const outcome = await verify(credentials, c)
    if (typeof outcome === 'object' && outcome !== null && 'refused' in outcome) throw reject(outcome.refused, challenge)
    accept?.(c, outcome as T)
    await next()
  }
}
