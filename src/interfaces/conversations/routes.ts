import {createRoute, OpenAPIHono, z} from '@hono/zod-openapi'
import type {Context, MiddlewareHandler} from 'hono'
import type {RouteDeps, ServedInterface} from '../../deps.js'
import {searchMetrics} from './metrics.js'
import {AppError} from '../../errors.js'
import {errorHeaders, errorShape, type ErrorRenderer} from '../../http/error-shape.js'
import {toByteStream} from '../../http/byte-stream.js'
import {apiKey} from '../../http/api-key.js'
import {schemaHook, type SchemaRefusal} from '../../http/validation.js'
import {methodNotAllowed} from '../../http/method-not-allowed.js'
import {clientAddress} from '../../http/client-address.js'
import {requestHeader, responseHeader, textResponse} from '../../http/fast.js'
import {answerSchema, type AnswerKind} from './answer-schema.js'
import type {AnswerFormat, ErrorBody} from './format.js'
import {FORMATS, type FormatList} from './formats.js'
import {type ConversationSettings, conversationLimits} from './limits.js'
import {either, negotiator} from './negotiation.js'
import {RateLimiter} from './rate-limit.js'
import {METHODS, type Method} from './schema.js'
import {searcherFor} from './search-pool.js'
import {conversationCall, type CallAnswer, type CallContext} from './calls.js'
import {authenticateKey} from './keys.js'
import type {ApiKeyRow} from './tables.js'
import type {Logger} from '../../lib/log.js'

/**
 * What E's middleware hands its handlers, typed on E's sub-app only: the format Accept agreed on
 * and the key the call was authenticated with.
 */
export type ConversationEnv = {
  Variables: {
    conversationFormat: AnswerFormat
    conversationKey: ApiKeyRow
    /** Set by the app's access log (src/http/access-log.ts), when the app has one. */
    requestId?: string
  }
}

export const API_KEY_HEADER = 'X-Service-Conversation-API-Key'

/** The Content-Type of an answer in `format`. */
const contentType = (format: AnswerFormat) => `${format.mediaType}; charset=utf-8`

/**
 * Interface E's error body, `{code, message, details}`, in the negotiated format; in `fallback`
 * (the list's default) when no format was agreed (the 406 itself). 5xx answers say nothing about
 * internals; a 503 raised on purpose (a search past its time budget) says what the caller can do
 * about it.
 */
function conversationErrors(fallback: AnswerFormat): ErrorRenderer {
  return (c: Context<ConversationEnv>, error) => {
    const body: ErrorBody = {
      code: error.status,
      message: error.status >= 500 ? (error.status === 503 ? 'service temporarily unavailable' : 'internal server error') : error.message,
      details: error.status >= 500 ? (error.status === 503 ? (error.details ?? 'Try again shortly.') : 'The failure was logged.') : (error.details ?? ''),
    }
    // Unset when the error came before negotiation, or is its 406.
    const agreed: AnswerFormat | undefined = c.get('conversationFormat')
    const format = agreed ?? fallback
    return c.body(format.error(body), error.status as 400, {...errorHeaders(error), Vary: 'Accept', 'Cache-Control': 'no-store', 'Content-Type': contentType(format)})
  }
}

/** Picks the answer's format from Accept (406 when it names none of `formats`), for the handlers and the error shape. */
function formatNegotiation(formats: FormatList): MiddlewareHandler<ConversationEnv> {
  const negotiate = negotiator(formats)
  const advice = `Accept ${either(formats.map((format) => format.mediaType))}.`
  return async function negotiateFormat(c, next) {
    const format = negotiate(requestHeader(c, 'accept'))
    if (!format) throw new AppError('not_acceptable', 'the Accept header names no format this interface serves', {details: advice})
    c.set('conversationFormat', format)
    // Set before the answer is made, so it is made with it: set after, on a made answer, it would
    // turn the adapter's light response into a whole Fetch Response again (about a millisecond).
    responseHeader(c, 'Vary', 'Accept')
    await next()
  }
}

const QUERY_HINT = 'Send terms[] once per term, start and end as ISO 8601 UTC datetimes, e.g. ?terms[]=sepsis&start=2024-01-01T00:00:00Z&end=2024-12-31T23:59:59Z'

/** One or more values of a repeatable query parameter (Hono gives one value as a string). */
const repeated = (description: string) =>
  z
    .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string()))
    .optional()
    .openapi({description, type: 'array', items: {type: 'string'}})

const required = (name: string, description: string, example: string) => z.string({error: `${name} is required`}).openapi({description, example})

const callQuery = z
  .object({
    'terms[]': repeated('A search term or phrase; repeat once per term (sent as terms%5B%5D)').openapi({example: ['sepsis', 'septic shock']}),
    terms: repeated('The same as terms[], for clients that send repeated parameters without brackets; both may be mixed'),
    start: required('start', 'Window start, ISO 8601 with a time zone, inclusive', '2025-01-01T00:00:00Z'),
    end: required('end', 'Window end, ISO 8601 with a time zone, inclusive; for a data call at most 366 days after start', '2025-12-31T23:59:59Z'),
  })
  .refine((query) => (query['terms[]']?.length ?? 0) + (query.terms?.length ?? 0) > 0, {error: 'terms[] is required'})

/** A refused query is E's 400, with the hint of how to write one. */
const refuseQuery: SchemaRefusal = (failure) => new AppError('bad_request', failure.error.issues[0]?.message ?? 'the query is not valid', {details: QUERY_HINT})

/** One answer in each of `formats`, as /openapi.json lists it (the default first). */
const inEach = (formats: readonly AnswerFormat[], kind: AnswerKind) => Object.fromEntries(formats.map((format) => [format.mediaType, {schema: answerSchema(format, kind)}]))

function callRoute(method: Method, formats: FormatList) {
  const errors = (description: string) => ({description, content: inEach(formats, 'error')})
  const [fallback] = formats
  const named = either(formats.map((format) => `${format.label} (${format.mediaType})`))
  return createRoute({
    method: 'get',
    path: `/conversations/${method}`,
    operationId: method === 'summary' ? 'conversationSummary' : 'conversationData',
    summary:
      method === 'summary'
        ? 'Counts of posts, comments and occurrences per term in a window'
        : 'Every matching conversation in a window, with all its comments (spends one data call)',
    tags: ['E. Conversations'],
    security: [{conversationApiKey: []}],
    request: {query: callQuery},
    responses: {
      200: {description: `${method === 'summary' ? 'Summary' : 'Data'} result in ${named}, chosen by Accept`, content: inEach(formats, method)},
      400: errors('terms[], start or end missing or malformed, or start after end'),
      401: errors('missing, unknown or revoked API key, or expired client'),
      402: errors('the subscription has lapsed'),
      403: errors('this key may not call this method'),
      405: errors('only GET and HEAD are allowed'),
      406: {
        description: `Accept names ${formats.length === 2 ? 'neither format' : 'none of the formats'} (error body in ${fallback.label})`,
        content: inEach([fallback], 'error'),
      },
      429: errors('no data calls left (Retry-After when the allowance renews), too many summary calls at once, or too many searches in flight with this key'),
      503: errors('the store is busy or unavailable, or the search ran past its time budget'),
    },
  })
}

/**
 * Interface E served in `formats` (FORMATS; a test may add its own, as
 * test/architecture/e-format-recipe.test.ts does). Its typed sub-app is mounted on a plain one,
 * which is what ServedInterface asks for: the app mounts routes whatever their variables.
 */
export function conversationsServed(formats: FormatList = FORMATS): ServedInterface<ConversationSettings> {
  return {
    label: 'E',
    title: 'conversation search (E)',
    prefixes: ['/conversations'],
    routes: (deps) => new OpenAPIHono().route('/', conversationRoutes(deps, formats)),
  }
}

/** Interface E as the app serves it. */
export const conversationsInterface: ServedInterface<ConversationSettings> = conversationsServed()

/** What every call of E's routes runs with (see calls.ts). */
interface Serving {
  deps: RouteDeps<ConversationSettings>
  logger: Logger
  context: () => CallContext
}

/**
 * Interface E's routes, answering in `formats`. A format not in FORMATS reaches no search thread
 * (search-protocol.ts, threadJob): only in-process and PostgreSQL searches can write it.
 */
export function conversationRoutes(deps: RouteDeps<ConversationSettings>, formats: FormatList = FORMATS): OpenAPIHono<ConversationEnv> {
  const {logger} = deps
  const app = new OpenAPIHono<ConversationEnv>({defaultHook: schemaHook(refuseQuery)})
  const limits = conversationLimits(deps.conversations)
  const summaryRate = new RateLimiter({burst: limits.summaryBurst, perSecond: limits.summaryPerSecond})
  // The search threads start with the first search, not with the app: most processes never search.
  const counted = deps.metrics?.of(searchMetrics)
  const context = (): CallContext => ({limits, summaryRate, searcher: searcherFor(deps.db, limits), reader: deps.reader, logger, counted})

  app.openAPIRegistry.registerComponent('securitySchemes', 'conversationApiKey', {type: 'apiKey', in: 'header', name: API_KEY_HEADER})
  app.use('/conversations/*', errorShape(conversationErrors(formats[0])), formatNegotiation(formats))
  for (const method of METHODS) serveMethod(app, method, formats, {deps, logger, context})
  return app
}

/** One method's route: its key check, its answer, and its 405. */
function serveMethod(app: OpenAPIHono<ConversationEnv>, method: Method, formats: FormatList, serving: Serving): void {
  const {db, clock, metrics} = serving.deps
  const route = callRoute(method, formats)
  app.on(
    ['GET', 'HEAD'],
    route.getRoutingPath(),
    apiKey({
      header: API_KEY_HEADER,
      verify: (key, c) => authenticateKey(serving.deps, key, method, {now: clock.now(), address: clientAddress(c), metrics}),
      missing: () => new AppError('unauthorized', 'an API key is required', {details: `Send the key in the ${API_KEY_HEADER} header.`}),
      accept: (c: Context<ConversationEnv>, key) => c.set('conversationKey', key),
    }),
  )
  app.openapi(route, async (c) => {
    const query = c.req.valid('query')
    const format = c.get('conversationFormat')
    const answer = await conversationCall(
      db,
      {
        method,
        key: c.get('conversationKey'),
        terms: [...(query['terms[]'] ?? []), ...(query.terms ?? [])],
        start: query.start,
        end: query.end,
        format,
        headOnly: c.req.method === 'HEAD',
      },
      clock.now(),
      serving.context(),
    )
    const headers = {Vary: 'Accept', 'Cache-Control': 'no-store', 'Content-Type': contentType(format)}
    if (answer.kind === 'data') return c.body(streamed(answer, c.get('requestId') ?? '-', serving.logger), 200, headers)
    // Plain-object headers with the request id (fast.ts): the adapter writes them straight out.
    return textResponse(c, format.summary(answer.result), 200, headers)
  })
  app.all(route.getRoutingPath(), methodNotAllowed('GET'))
}

/** A data answer's bytes as the response body; a failure mid-stream can only be logged (the status has gone out). */
function streamed(answer: Extract<CallAnswer, {kind: 'data'}>, requestId: string, logger: Logger): ReadableStream<Uint8Array> {
  return toByteStream(answer.body(), (error) => {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
    logger.log('error', `error id=${requestId} conversations data answer ${answer.result.id} failed mid-stream: ${detail}`, 'conversations data answer failed mid-stream', {
      request_id: requestId,
      interface: 'E',
      answer_id: answer.result.id,
      error: detail,
    })
  })
}
