import type {IncomingMessage} from 'node:http'
import type {Context} from 'hono'
import {auth as parseBasicAuth} from 'hono/utils/basic-auth'

/*
 * The two places medpanel reaches under Hono's public API, for speed, and nothing else does:
 *
 * - `c.env.incoming`: on @hono/node-server, Node's own IncomingMessage. Reading a header or the
 *   body from it skips building a Fetch `Request` (its Headers object, its web stream), which
 *   costs more than the rest of a token check or a withdrawal's HTTP handling.
 * - `c.req.bodyCache`: where HonoRequest keeps the promise of each body form it has read. A body
 *   read from Node's stream is left there, so `c.req.text()`, `c.req.json()` and the validators
 *   (form, JSON) take it instead of reading a stream that is already drained.
 *
 * - Hono's Basic parser (`hono/utils/basic-auth`) takes a Fetch `Request` but reads only its
 *   Authorization header: it is handed that one header (basicCredentialsOf), so no `Request` is
 *   built for it.
 *
 * None of this is documented. test/http/hono-node.test.ts fails when a Hono or @hono/node-server
 * upgrade changes it; the fix then belongs here alone.
 */

/** Node's request, as @hono/node-server hands it to the app; undefined on other runtimes and for in-process requests. */
export function nodeIncoming(c: Context): IncomingMessage | undefined {
  return (c.env as {incoming?: IncomingMessage} | undefined)?.incoming
}

/** Leaves a body read as text where Hono's body readers and validators look first. */
export function cacheBodyText(c: Context, text: string): void {
  ;(c.req.bodyCache as {text?: Promise<string>}).text = Promise.resolve(text)
}

/** Leaves a URL-encoded form, already parsed, where Hono's form validator looks first. */
export function cacheForm(c: Context, form: URLSearchParams): void {
  ;(c.req.bodyCache as {formData?: Promise<unknown>}).formData = Promise.resolve(form)
}

/** Whether a form was left by cacheForm (its body is read, so no body limit need wrap it again). */
export function formCached(c: Context): boolean {
  return c.req.bodyCache.formData !== undefined
}

/** The user name and password of an `Authorization: Basic` header value, by Hono's parser; undefined when it is none. */
export function basicCredentialsOf(header: string | undefined): {username: string; password: string} | undefined {
  const headers = {get: (name: string) => (name.toLowerCase() === 'authorization' ? (header ?? null) : null)}
  return parseBasicAuth({headers} as unknown as Request)
}
