import type {Context, MiddlewareHandler} from 'hono'
import type {AppError} from '../errors.js'
import {requestHeader} from './fast.js'

export interface ApiKeyOptions<T> {
  /** The request header that carries the key. */
  header: string
  /**
   * Checks the presented key and returns what it grants; throws the interface's own AppError when
   * the key is unknown, revoked or not allowed here (a refusal may need its own status and details).
   */
  verify: (key: string, c: Context) => Promise<T>
  /** The interface's refusal when no key was sent at all. */
  missing: () => AppError
  /** Hands what the key grants to the handlers. */
  accept: (c: Context, granted: T) => void
}

/** API-key authentication from one header, checked by a verify callback. */
export function apiKey<T>({header, verify, missing, accept}: ApiKeyOptions<T>): MiddlewareHandler {
  const name = header.toLowerCase()
  return async function requireApiKey(c, next) {
    const presented = requestHeader(c, name)?.trim()
    if (!presented) throw missing()
    accept(c, await verify(presented, c))
    await next()
  }
}
