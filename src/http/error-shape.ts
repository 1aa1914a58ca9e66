import type {MiddlewareHandler} from 'hono'
import {HTTPException} from 'hono/http-exception'
import {storeFailure, storeRefusal} from '../store/failure.js'
import {AppError, type Challenge, codeOfStatus} from '../errors.js'
import {guarded, type Guard} from './guards.js'
import {type ErrorRenderer, httpVariables} from './env.js'
import {jsonResponse} from './fast.js'

export type {ErrorRenderer} from './env.js'

/** Marks every route below it as answering errors with `render`. */
export function errorShape(render: ErrorRenderer): MiddlewareHandler {
  return guarded(useErrorShape(render))
}

/** The same as a guard, to chain with a route's other checks in one middleware. */
export function useErrorShape(render: ErrorRenderer): Guard {
  return function setErrorShape(c) {
    httpVariables(c).set('renderError', render)
  }
}

/**
 * Any thrown value as an AppError. Unknown failures become a bare 500 whose message says nothing
 * about internals; the caller logs the original with the request id.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error
  if (error instanceof HTTPException) {
    const code = codeOfStatus(error.status) ?? (error.status >= 500 ? 'internal' : 'bad_request')
    return new AppError(code, error.message || 'request rejected', {status: error.status as 400})
  }
  const refused = storeRefusal(error)
  if (refused) return new AppError('bad_request', refused)
  const failure = storeFailure(error)
  if (failure === 'busy') return new AppError('unavailable', 'the store is busy; try again shortly', {headers: {'Retry-After': '1'}})
  if (failure === 'unavailable') return new AppError('unavailable', 'the store cannot take this request right now; nothing was changed', {headers: {'Retry-After': '30'}})
  // The database connection broke mid-request (a server restart, a failover): the request's commit
  // may have gone through, so "nothing was changed" would not be true. Sending it again is safe
  // where the interface makes it so (a withdrawal with its Idempotency-Key).
  if (failure === 'lost') {
    return new AppError(
      'unavailable',
      'the connection to the store broke during this request, which may or may not have been saved; send it again (a withdrawal with the same Idempotency-Key is taken once)',
      {
        headers: {'Retry-After': '5'},
      },
    )
  }
  return new AppError('internal', 'internal server error')
}

/**
 * `{"message": …}`: interface C's shape, and the default for routes that name none. An error
 * answers this request only, so no cache keeps it (as OAuth's never are, RFC 6749 §5.2).
 */
export const renderMessage: ErrorRenderer = (c, error) => jsonResponse(c, {message: error.message}, error.status as 400, {'Cache-Control': 'no-store', ...errorHeaders(error)})

/**
 * The headers of an error answer, for every renderer: the error's own, and WWW-Authenticate
 * written from its challenge (or from `fallback`, a challenge the shape adds when the error
 * carries none). This is the one place a challenge becomes a header.
 */
export function errorHeaders(error: AppError, fallback?: Challenge): Record<string, string> {
  const challenge = error.challenge ?? fallback
  return challenge === undefined ? error.headers : {...error.headers, 'WWW-Authenticate': wwwAuthenticate(challenge, error.message)}
}

/**
 * RFC 7617 §2 (the realm, and that credentials are UTF-8), RFC 6750 §3 (the error, and why) and
 * RFC 9449 §7.1 (DPoP's, with the algorithms a proof may use).
 */
export function wwwAuthenticate(challenge: Challenge, message: string): string {
  if (challenge.scheme === 'Basic') return `Basic realm="${challenge.realm}", charset="UTF-8"`
  // The description is a quoted-string: quotes and backslashes are dropped rather than escaped.
  const description = `error_description="${message.replace(/["\\]/g, '')}"`
  if (challenge.scheme === 'DPoP') return `DPoP algs="${challenge.algs}", error="${challenge.error}", ${description}`
  const scope = challenge.scope === undefined ? '' : `, scope="${challenge.scope}"`
  return `Bearer realm="medpanel", error="${challenge.error}"${scope}, ${description}`
}
