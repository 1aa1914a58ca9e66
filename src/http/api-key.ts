import type {MiddlewareHandler} from 'hono'
import type {CredentialCheck} from './credential-check.js'
import {requestHeader} from './fast.js'

export interface ApiKeyOptions<T> extends CredentialCheck<string, T> {
  /** The request header that carries the key. */
  header: string
}

/**
 * API-key authentication from one header, checked by a verify callback that throws the
 * interface's AppError when the key is unknown, revoked or not allowed here.
 */
export function apiKey<T>({header, verify, missing, accept}: ApiKeyOptions<T>): MiddlewareHandler {
  const name = header.toLowerCase()
  return async function requireApiKey(c, next) {
    const presented = requestHeader(c, name)?.trim()
    if (!presented) throw missing()
    const granted = await verify(presented, c)
    accept?.(c, granted)
    await next()
  }
}
