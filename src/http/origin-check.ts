import type {Context, MiddlewareHandler} from 'hono'
import {csrf} from 'hono/csrf'
import {AppError} from '../errors.js'
import {requestHeader} from './fast.js'

/**
 * Refuses a form POST that a browser sent from another site (hono's csrf check: the Origin header,
 * or Sec-Fetch-Site, must say the page itself posted it), and says which problem it was: no
 * Origin at all, or the Origin of another site, named. `origins` are the addresses the pages are
 * served on: the public base URL behind a proxy, and the address the request came to.
 */
export function originCheck(origins: (c: Context) => string[]): MiddlewareHandler {
  const check = csrf({origin: (origin, c) => origins(c).includes(origin)})
  return async function checkFormOrigin(c, next) {
    let passed = false
    try {
      await check(c, async () => {
        passed = true
      })
    } catch {
      // hono's refusal carries no reason; the one below does.
    }
    if (!passed) {
      const origin = requestHeader(c, 'origin')
      const allowed = origins(c).join(' or ')
      throw new AppError(
        'forbidden',
        origin
          ? `this form was sent from another site (Origin: ${origin}); only pages of ${allowed} may send it`
          : 'this form was sent without an Origin header, so it cannot be told apart from a request forged by another site; send it from the page itself',
      )
    }
    await next()
  }
}
