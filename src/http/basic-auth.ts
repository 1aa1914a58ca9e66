import type {Context, MiddlewareHandler} from 'hono'
import {auth as parseBasicAuth} from 'hono/utils/basic-auth'
import type {AppError} from '../errors.js'

export interface BasicCredentials {
  username: string
  password: string
}

/** The challenge every HTTP Basic refusal carries (RFC 7617 §2: the realm, and that it is UTF-8). */
export function basicChallenge(realm: string): string {
  return `Basic realm="${realm}", charset="UTF-8"`
}

/**
 * The credentials of an `Authorization: Basic` header, parsed by Hono's own parser, or undefined
 * when the header is missing or malformed. `formEncoded`: OAuth clients form-encode the client id
 * and secret before they join them (RFC 6749 §2.3.1), so both are decoded once more.
 */
export function readBasicCredentials(c: Context, {formEncoded = false} = {}): BasicCredentials | undefined {
  const credentials = parseBasicAuth(c.req.raw)
  if (!credentials || !formEncoded) return credentials
  return {username: formDecode(credentials.username), password: formDecode(credentials.password)}
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    // Not form-encoded after all (a bare '%'): the value as sent.
    return value
  }
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
 * HTTP Basic authentication (RFC 7617) of a caller against a verify callback. A missing or
 * malformed header is refused before verify runs.
 */
export function basicClientAuth<T>({realm, verify, reject, accept}: BasicClientAuthOptions<T>): MiddlewareHandler {
  const challenge = basicChallenge(realm)
  return async function requireBasic(c, next) {
    const credentials = readBasicCredentials(c)
    if (!credentials) throw reject('HTTP Basic authentication is required', challenge)
    const outcome = await verify(credentials, c)
    if (typeof outcome === 'object' && outcome !== null && 'refused' in outcome) throw reject(outcome.refused, challenge)
    accept?.(c, outcome as T)
    await next()
  }
}
