import {OpenAPIHono} from '@hono/zod-openapi'
import {z} from '@hono/zod-openapi'
import type {Context} from 'hono'
import type {AppDeps} from '../../deps.js'
import {AppError} from '../../errors.js'
import {errorShape, type ErrorRenderer} from '../../http/error-shape.js'
import {toByteStream} from '../../http/byte-stream.js'
import {rejectInvalid} from '../../http/validation.js'
import {clientAddress} from '../../http/fast.js'
import {storeFailure} from '../../store/failure.js'
import {toJson} from './format-json.js'
import {errorXml, toXml} from './format-xml.js'
import {defaultLimits} from './limits.js'
import {JSON_TYPE, negotiate, XML_TYPE, type Format} from './negotiation.js'
import {RateLimiter} from './rate-limit.js'
import type {Method} from './schema.js'
import {searcherFor} from './search-pool.js'
import {conversationCall, type CallAnswer, type CallContext} from './service.js'
import {stderrLog} from '../../http/access-log.js'

declare module 'hono' {
  interface ContextVariableMap {
    conversationFormat: Format
  }
}

export const API_KEY_HEADER = 'X-Service-Conversation-API-Key'
const ALLOW = 'GET, HEAD'

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
  const headers = {...error.headers, Vary: 'Accept', 'Cache-Control': 'no-store'}
  if (c.get('conversationFormat') === 'xml') {
    return c.body(errorXml(body), error.status as 400, {...headers, 'Content-Type': `${XML_TYPE}; charset=utf-8`})
  }
  return c.body(JSON.stringify(body), error.status as 400, {...headers, 'Content-Type': `${JSON_TYPE}; charset=utf-8`})
}

const callQuery = z.object({
  'terms[]': z.array(z.string()).openapi({description: 'A search term or phrase; repeat once per term (terms%5B%5D)'}),
  start: z.string().openapi({description: 'Window start, ISO 8601 UTC, inclusive', example: '2025-01-01T00:00:00Z'}),
  end: z.string().openapi({description: 'Window end, ISO 8601 UTC, inclusive', example: '2025-12-31T23:59:59Z'}),
})

export function conversationRoutes(deps: AppDeps): OpenAPIHono {
  const {db, clock} = deps
  const writeLog = deps.log ?? stderrLog
  const app = new OpenAPIHono({defaultHook: rejectInvalid})
  const limits = {...defaultLimits(), ...deps.conversations}
  const summaryRate = new RateLimiter({burst: limits.summaryBurst, perSecond: limits.summaryPerSecond})
  // The search threads start with the first search, not with the app: most processes never search.
  const context = (): CallContext => ({limits, summaryRate, searcher: searcherFor(db, limits)})

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

  const handle = (method: Method) => async (c: Context) => {
    const terms = [...(c.req.queries('terms[]') ?? []), ...(c.req.queries('terms') ?? [])]
    const format = c.get('conversationFormat')
    let answer: CallAnswer
    try {
      answer = await conversationCall(
        db,
        {method, apiKey: c.req.header(API_KEY_HEADER), terms, start: c.req.query('start'), end: c.req.query('end'), format, headOnly: c.req.method === 'HEAD', address: clientAddress(c)},
        clock.now(),
        context(),
      )
    } catch (error) {
      if (error instanceof AppError || storeFailure(error) === undefined) throw error
      writeLog(`conversations: store unavailable: ${error instanceof Error ? error.message : String(error)}`)
      throw new AppError('unavailable', 'the store is unavailable', {headers: {'Retry-After': '5'}, cause: error})
    }
    const headers = {Vary: 'Accept', 'Cache-Control': 'no-store', 'Content-Type': `${format === 'xml' ? XML_TYPE : JSON_TYPE}; charset=utf-8`}
    if (answer.kind === 'data') {
      const requestId = c.get('requestId') ?? '-'
      const body = toByteStream(answer.body(), (error) => {
        const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
        writeLog(`error id=${requestId} conversations data answer ${answer.result.id} failed mid-stream: ${detail}`)
      })
      return c.body(body, 200, headers)
    }
    return c.body(format === 'xml' ? toXml(answer.result) : JSON.stringify(toJson(answer.result)), 200, headers)
  }

  for (const method of ['summary', 'data'] as const) {
    const path = `/conversations/${method}`
    app.openAPIRegistry.registerPath({
      method: 'get',
      path,
      summary: method === 'summary' ? 'Counts of posts, comments and occurrences per term in a window' : 'Every matching conversation in a window, with all its comments (spends one data call)',
      tags: ['E. Conversations'],
      security: [{conversationApiKey: []}],
      request: {query: callQuery},
      responses: {
        200: {description: `${method === 'summary' ? 'Summary' : 'Data'} result in JSON (${JSON_TYPE}) or XML (${XML_TYPE}), chosen by Accept`},
        400: {description: 'terms[], start or end missing or malformed, or start after end'},
        401: {description: 'missing, unknown or revoked API key, or expired client'},
        402: {description: 'the subscription has lapsed'},
        403: {description: 'this key may not call this method'},
        405: {description: 'only GET and HEAD are allowed'},
        406: {description: 'Accept names neither format (error body in JSON)'},
        429: {description: 'no data calls left (Retry-After when the allowance renews)'},
        503: {description: 'the store is unavailable'},
      },
    })
    app.get(path, handle(method))
    app.all(path, (c) => {
      throw new AppError('method_not_allowed', `${c.req.method} is not supported here`, {headers: {Allow: ALLOW}, details: `Use ${ALLOW}.`})
    })
  }
  return app
}
