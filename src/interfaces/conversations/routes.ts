import {createRoute, OpenAPIHono, z} from '@hono/zod-openapi'
import type {RouteDeps, ServedInterface} from '../../deps.js'
import {AppError} from '../../errors.js'
import {errorHeaders, errorShape, type ErrorRenderer} from '../../http/error-shape.js'
import {toByteStream} from '../../http/byte-stream.js'
import {apiKey} from '../../http/api-key.js'
import {schemaHook, type SchemaRefusal} from '../../http/validation.js'
import {methodNotAllowed} from '../../http/method-not-allowed.js'
import {clientAddress} from '../../http/client-address.js'
import {dataAnswer, dataAnswerXml, summaryAnswer, summaryAnswerXml} from './answer-schema.js'
import {toJson} from './format-json.js'
import {errorXml, toXml} from './format-xml.js'
import {type ConversationSettings, conversationLimits} from './limits.js'
import {JSON_TYPE, negotiate, XML_TYPE, type Format} from './negotiation.js'
import {RateLimiter} from './rate-limit.js'
import {METHODS, type Method} from './schema.js'
import {searcherFor} from './search-pool.js'
import {conversationCall, type CallContext} from './calls.js'
import {authenticateKey} from './keys.js'
import type {ApiKeyRow} from './tables.js'

declare module 'hono' {
  interface ContextVariableMap {
    conversationFormat: Format
    conversationKey: ApiKeyRow
  }
}

export const API_KEY_HEADER = 'X-Service-Conversation-API-Key'

/**
 * Interface E's error body, `{code, message, details}`, in the negotiated format; JSON when no
 * format could be agreed (the 406 itself). 5xx answers say nothing about internals; a 503 raised
 * on purpose (a search past its time budget) says what the caller can do about it.
 */
export const renderConversationError: ErrorRenderer = (c, error) => {
  const body = {
    code: error.status,
    message: error.status >= 500 ? (error.status === 503 ? 'service temporarily unavailable' : 'internal server error') : error.message,
    details: error.status >= 500 ? (error.status === 503 ? (error.details ?? 'Try again shortly.') : 'The failure was logged.') : (error.details ?? ''),
  }
  const headers = {...errorHeaders(error), Vary: 'Accept', 'Cache-Control': 'no-store'}
  if (c.get('conversationFormat') === 'xml') {
    return c.body(errorXml(body), error.status as 400, {...headers, 'Content-Type': `${XML_TYPE}; charset=utf-8`})
  }
  return c.body(JSON.stringify(body), error.status as 400, {...headers, 'Content-Type': `${JSON_TYPE}; charset=utf-8`})
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

const errorBody = z.object({code: z.number().int(), message: z.string(), details: z.string()}).openapi('ConversationError')
const bothFormats = (description: string, schema: z.ZodType) => ({
  description,
  content: {[JSON_TYPE]: {schema}, [XML_TYPE]: {schema: z.string().openapi({description: 'The same document in XML'})}},
})

function callRoute(method: Method) {
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
      200: {
        description: `${method === 'summary' ? 'Summary' : 'Data'} result in JSON (${JSON_TYPE}) or XML (${XML_TYPE}), chosen by Accept`,
        content: {
          [JSON_TYPE]: {schema: method === 'summary' ? summaryAnswer : dataAnswer},
          [XML_TYPE]: {schema: method === 'summary' ? summaryAnswerXml : dataAnswerXml},
        },
      },
      400: bothFormats('terms[], start or end missing or malformed, or start after end', errorBody),
      401: bothFormats('missing, unknown or revoked API key, or expired client', errorBody),
      402: bothFormats('the subscription has lapsed', errorBody),
      403: bothFormats('this key may not call this method', errorBody),
      405: bothFormats('only GET and HEAD are allowed', errorBody),
      406: {description: 'Accept names neither format (error body in JSON)', content: {[JSON_TYPE]: {schema: errorBody}}},
      429: bothFormats('no data calls left (Retry-After when the allowance renews), too many summary calls at once, or too many searches in flight with this key', errorBody),
      503: bothFormats('the store is busy or unavailable, or the search ran past its time budget', errorBody),
    },
  })
}

/** Interface E as the app serves it. */
export const conversationsInterface: ServedInterface<ConversationSettings> = {
  label: 'E',
  title: 'conversation search (E)',
  prefixes: ['/conversations'],
  routes: (deps) => conversationRoutes(deps),
}

export function conversationRoutes(deps: RouteDeps<ConversationSettings>): OpenAPIHono {
  const {db, clock, logger} = deps
  const app = new OpenAPIHono({defaultHook: schemaHook(refuseQuery)})
  const limits = conversationLimits(deps.conversations)
  const summaryRate = new RateLimiter({burst: limits.summaryBurst, perSecond: limits.summaryPerSecond})
  // The search threads start with the first search, not with the app: most processes never search.
  const context = (): CallContext => ({limits, summaryRate, searcher: searcherFor(db, limits), logger})

  app.openAPIRegistry.registerComponent('securitySchemes', 'conversationApiKey', {type: 'apiKey', in: 'header', name: API_KEY_HEADER})

  app.use('/conversations/*', errorShape(renderConversationError), async function negotiateFormat(c, next) {
    const format = negotiate(c.req.header('accept'))
    if (!format) {
      throw new AppError('not_acceptable', 'the Accept header names no format this interface serves', {
        details: `Accept ${JSON_TYPE} or ${XML_TYPE}.`,
      })
    }
    c.set('conversationFormat', format)
    await next()
    c.header('Vary', 'Accept')
  })

  for (const method of METHODS) {
    const route = callRoute(method)
    app.on(
      ['GET', 'HEAD'],
      route.getRoutingPath(),
      apiKey({
        header: API_KEY_HEADER,
        verify: (key, c) => authenticateKey(db, key, method, {now: clock.now(), address: clientAddress(c)}),
        missing: () => new AppError('unauthorized', 'an API key is required', {details: `Send the key in the ${API_KEY_HEADER} header.`}),
        accept: (c, key) => c.set('conversationKey', key),
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
        context(),
      )
      const headers = {Vary: 'Accept', 'Cache-Control': 'no-store', 'Content-Type': `${format === 'xml' ? XML_TYPE : JSON_TYPE}; charset=utf-8`}
      if (answer.kind === 'data') {
        const requestId = c.get('requestId') ?? '-'
        const body = toByteStream(answer.body(), (error) => {
          const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
          logger.log('error', `error id=${requestId} conversations data answer ${answer.result.id} failed mid-stream: ${detail}`, 'conversations data answer failed mid-stream', {
            request_id: requestId,
            interface: 'E',
            answer_id: answer.result.id,
            error: detail,
          })
        })
        return c.body(body, 200, headers)
      }
      return c.body(format === 'xml' ? toXml(answer.result) : JSON.stringify(toJson(answer.result)), 200, headers)
    })
    app.all(route.getRoutingPath(), methodNotAllowed('GET'))
  }
  return app
}
