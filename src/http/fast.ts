import type {IncomingMessage} from 'node:http'
import type {Context, MiddlewareHandler, TypedResponse} from 'hono'
import type {ContentfulStatusCode} from 'hono/utils/http-status'
import type {JSONParsed} from 'hono/utils/types'
import type {z} from 'zod'
import {cacheBodyText, cacheForm, nodeIncoming} from './hono-node.js'
import {type HttpEnv, httpVariables} from './env.js'

/**
 * One request header, read straight from Node's parsed headers when running on @hono/node-server.
 * Asking the Fetch `Request` instead makes the adapter build a whole `Headers` object first,
 * which costs more than the rest of a token check. Other runtimes take the standard path.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = nodeIncoming(c)
  return incoming ? incomingHeader(incoming, name) : c.req.header(name)
}

/** One header of Node's own request (`name` in lower case), as requestHeader reads it: repeated ones joined. */
export function incomingHeader(incoming: IncomingMessage, name: string): string | undefined {
  const value = incoming.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/**
 * A JSON response with plain-object headers: every JSON answer of the service is made here, never
 * with `c.json` (test/architecture/http-spelling.test.ts). On Node the adapter writes those
 * headers straight to the socket; Hono's `c.json` with extra headers goes through a Fetch
 * `Headers` object and back. It carries the request id, and the headers set with
 * `responseHeader` before it (Hono's own `c.header` would be lost here).
 */
export function jsonResponse<T, S extends ContentfulStatusCode>(
  c: Context,
  body: T,
  status: S,
  headers: Record<string, string> = {},
): Response & TypedResponse<JSONParsed<T>, S, 'json'> {
  // The route typing only needs to know what the body holds; the object is a plain Response.
  return textResponse(c, JSON.stringify(body), status, {'content-type': 'application/json', ...headers}) as Response & TypedResponse<JSONParsed<T>, S, 'json'>
}

/**
 * A response with a ready text body and plain-object headers (see jsonResponse), carrying the
 * request id (where a request id was given: the partner receiver's app has none) and the headers
 * set earlier with `responseHeader`; `headers` must name the content type, and win over those.
 */
export function textResponse(c: Context, text: string, status: ContentfulStatusCode, headers: Record<string, string>): Response {
  const id = httpVariables(c).get('requestId')
  const own = id === undefined ? headers : {'x-request-id': id, ...headers}
  const set = pendingHeaders.get(c)
  const response = new Response(text, {status, headers: set === undefined ? own : withPending(set, own)})
  if (id !== undefined) withRequestId.add(response)
  return response
}

/**
 * Headers set with `responseHeader` before the answer was made, by lower-cased name, for the
 * plain-object answers above.
 */
const pendingHeaders = new WeakMap<Context, Record<string, string>>()

/**
 * Sets a header of the answer, the one way to do so (never `c.header`): before the handler
 * answers, on whatever answer it makes (jsonResponse and textResponse as well as Hono's own
 * `c.html` and `c.body`); in a middleware after `next()`, on the answer made.
 */
export function responseHeader(c: Context, name: string, value: string): void {
  c.header(name, value)
  if (c.finalized) return
  const set = pendingHeaders.get(c)
  if (set === undefined) pendingHeaders.set(c, {[name.toLowerCase()]: value})
  else set[name.toLowerCase()] = value
}

/** `set` under `own`: a header named in both, in any case, is `own`'s. */
function withPending(set: Record<string, string>, own: Record<string, string>): Record<string, string> {
  const merged: Record<string, string> = {...set}
  for (const [name, value] of Object.entries(own)) {
    delete merged[name.toLowerCase()]
    merged[name] = value
  }
  return merged
}

const withRequestId = new WeakSet<Response>()

/** True for responses that already carry X-Request-Id (made by `jsonResponse`). */
export function carriesRequestId(response: Response): boolean {
  return withRequestId.has(response)
}

/** One decoder for every body: decode() without `stream` keeps no state between calls. */
const UTF8 = new TextDecoder()

/**
 * The request body as text, refused with `tooLarge()` past `maxBytes`. On @hono/node-server it is
 * read straight from Node's request stream (a Fetch `Request` with a web stream body costs more
 * than the rest of a withdrawal's HTTP handling), then left where both the adapter (`rawBody`) and
 * Hono (`c.req.text()`, `c.req.json()`, the validators) find it. Elsewhere, and whenever the Fetch
 * body was already touched, it goes through the Fetch body with the same limit.
 */
export async function requestBodyText(c: Context, maxBytes: number, tooLarge: () => Error): Promise<string> {
  // @hono/node-server reads `rawBody` (its own field) instead of the drained stream.
  const incoming = nodeIncoming(c) as (IncomingMessage & {rawBody?: Buffer}) | undefined
  const declared = Number(requestHeader(c, 'content-length') ?? Number.NaN)
  if (declared > maxBytes) throw tooLarge()
  let text: string
  if (incoming && typeof incoming.on === 'function' && incoming.readableDidRead === false && incoming.rawBody === undefined) {
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = []
      let size = 0
      incoming.on('data', (chunk) => {
        size += chunk.length
        if (size > maxBytes) reject(tooLarge())
        else chunks.push(chunk)
      })
      incoming.on('end', () => resolve(Buffer.concat(chunks)))
      incoming.on('error', reject)
    })
    incoming.rawBody = raw
    // As Fetch's text() decodes: UTF-8, a leading byte order mark dropped, bad bytes replaced.
    text = UTF8.decode(raw)
  } else {
    // Read chunk by chunk, so a body without a Content-Length is refused once it passes the limit.
    const chunks: Uint8Array[] = []
    let size = 0
    const reader = c.req.raw.body?.getReader()
    for (let next = await reader?.read(); next && !next.done; next = await reader?.read()) {
      size += next.value.byteLength
      if (size > maxBytes) {
        await reader?.cancel()
        throw tooLarge()
      }
      chunks.push(next.value)
    }
    text = UTF8.decode(Buffer.concat(chunks))
  }
  cacheBodyText(c, text)
  return text
}

/**
 * Reads an `application/x-www-form-urlencoded` body the way requestBodyText does and leaves it
 * parsed where Hono's form validator looks first (`bodyCache.formData`), so a form POST never
 * builds a Fetch `Request` with a web stream body nor runs it through Fetch's form parser: on
 * Node those cost several times what introspecting a token does. The parse is the same (the
 * URL-encoded form rules of URLSearchParams, which Fetch's formData() applies too); Hono's
 * validator only walks the entries. Anything else (multipart, no body) takes the standard path.
 */
export function urlEncodedForm(maxBytes: number, tooLarge: () => Error): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const type = requestHeader(c, 'content-type') ?? ''
    if (c.req.method === 'POST' && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
      const text = await requestBodyText(c, maxBytes, tooLarge)
      const form = new URLSearchParams(text)
      cacheForm(c, form)
      c.set('urlEncodedForm', form)
    }
    await next()
  }
}

/** The Content-Types @hono/zod-openapi lets through to a route's form validator as URL-encoded: its own test. */
const URL_ENCODED = /^application\/x-www-form-urlencoded(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i

/**
 * The form that urlEncodedForm read, as a route's schema accepts it, or undefined: when the body
 * is not a URL-encoded form with a Content-Type the route's own validators take as one, or was
 * not read by urlEncodedForm, or the schema refuses it. For a hot route's handler to check its
 * form itself and answer at once, without @hono/zod-openapi's validator layers (whose media-type
 * check asks the Fetch request for a header, which builds the whole Request); on undefined it
 * hands over to those layers, which answer every other case exactly as before. The form is
 * built as Hono's form validator builds it: a repeated field, or one named with `[]`, becomes an
 * array.
 */
export function checkedForm<S extends z.ZodType>(c: Context, schema: S): z.output<S> | undefined {
  const form = httpVariables(c).get('urlEncodedForm')
  const type = requestHeader(c, 'content-type')
  if (!form || type === undefined || !URL_ENCODED.test(type)) return undefined
  const fields: Record<string, string | string[]> = Object.create(null)
  form.forEach((value, key) => {
    const seen = fields[key]
    if (key.endsWith('[]')) fields[key] = [...((seen as string[] | undefined) ?? []), value]
    else if (Array.isArray(seen)) seen.push(value)
    else if (Object.hasOwn(fields, key)) fields[key] = [seen as string, value]
    else fields[key] = value
  })
  const result = schema.safeParse(fields)
  return result.success ? result.data : undefined
}
