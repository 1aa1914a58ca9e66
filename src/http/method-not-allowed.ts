import type {Handler} from 'hono'
import {AppError} from '../errors.js'

/**
 * The handler for a known path asked with a method it does not serve: 405 with the Allow header
 * (RFC 9110 §15.5.6), in the interface's own error shape. Mount it with `app.all(path, …)` after
 * the path's real routes. `allow` lists what the path serves; HEAD is implied by GET and not named
 * in the message.
 */
export function methodNotAllowed(...allow: string[]): Handler {
  const header = allow.includes('GET') && !allow.includes('HEAD') ? [...allow, 'HEAD'].join(', ') : allow.join(', ')
  const named = allow.filter((method) => method !== 'HEAD').join(' or ')
  return function refuseMethod(c) {
    throw new AppError('method_not_allowed', `${c.req.method} is not supported here; use ${named}`, {headers: {Allow: header}, details: `Use ${named}.`})
  }
}
