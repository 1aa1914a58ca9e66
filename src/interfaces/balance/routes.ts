import {createRoute, OpenAPIHono, z} from '@hono/zod-openapi'
import {narrow} from '../../store/database.js'
import type {Context, MiddlewareHandler, TypedResponse} from 'hono'
import {isLosslessNumber, parse as parseLossless} from 'lossless-json'
import type {AppDeps, ServedInterface} from '../../deps.js'
import {AppError, type Challenge} from '../../errors.js'
import {basicClientAuth} from '../../http/basic-auth.js'
import {errorShape, renderMessage} from '../../http/error-shape.js'
import {carriesRequestId, requestBodyText, requestHeader, textResponse} from '../../http/fast.js'
import {clientAddress} from '../../http/client-address.js'
import {methodNotAllowed} from '../../http/method-not-allowed.js'
import {invalidRequest, schemaHook, type SchemaRefusal} from '../../http/validation.js'
import {describeZodError} from '../../lib/validate.js'
import {authenticateClient, hasGrant} from '../../registry/service.js'
import type {BalanceDb as Db} from './tables.js'
import {readerOf} from '../../store/db.js'
import {metricsOf} from '../../store/context.js'
import type {Clock} from '../../lib/clock.js'
import {toJson} from '../../lib/exact-json.js'
import {checkJsonStructure} from './decimal-json.js'
import {listCountries} from '../../lib/iso3166.js'
import {regionsOf} from '../../lib/iso3166-regions.js'
import {
  ACCOUNT_KEYS,
  countrySchema,
  messageSchema,
  parseIdempotencyKey,
  regionSchema,
  summarySchema,
  transactionListSchema,
  transactionSchema,
  withdrawalBodySchema,
  withdrawalCreatedSchema,
  withdrawalTypeSchema,
} from './schema.js'
import * as balance from './service.js'
import {config} from '../../config.js'
import {balanceConfig} from './config.js'
import {balanceMetrics} from './metrics.js'

declare module 'hono' {
  interface ContextVariableMap {
    balanceClientId: string
  }
}

const BALANCE_CHALLENGE: Challenge = {scheme: 'Basic', realm: 'medpanel balance'}

/** Every refusal of a balance client is the spec's 401 ("authentication failed or no permission"). */
const refused = (reason: string) => new AppError('unauthorized', reason, {challenge: BALANCE_CHALLENGE})

/** HTTP Basic with the client_id and client_secret of a live client holding the `balance` grant. */
export function balanceClientAuth(db: Db, clock: Clock): MiddlewareHandler {
  return basicClientAuth({
    missing: () => refused('HTTP Basic authentication with client_id:client_secret is required'),
    async verify({username, password}, c) {
      const client = await authenticateClient(narrow(db), username, password, {now: clock.now(), address: clientAddress(c)})
      if (!client) throw refused('client authentication failed')
      if (client.expired_at !== null) throw refused('this client account has expired')
      if (!hasGrant(client, 'balance')) throw refused('this client has no permission for the balance interface')
      return client.id
    },
    accept: (c, clientId) => c.set('balanceClientId', clientId),
  })
}

/** A JSON answer whose amounts are written from their exact decimal text. */
function send<S extends 200 | 201 = 200>(c: Context, value: unknown, status?: S, headers: Record<string, string> = {}): TypedResponse<never, S, 'json'> {
  return sendText(c, toJson(value), status, headers)
}

function sendText<S extends 200 | 201 = 200>(c: Context, text: string, status?: S, headers: Record<string, string> = {}): TypedResponse<never, S, 'json'> {
  // Plain-object headers, Cache-Control included, so the answer goes out without a Fetch Headers
  // object being made and changed (see http/fast.ts).
  const response = textResponse(c, text, status ?? 200, {'content-type': 'application/json; charset=UTF-8', 'cache-control': 'no-store', ...headers})
  // Written by toJson (exact decimals) rather than c.json; the route's schema still describes it.
  return response as unknown as TypedResponse<never, S, 'json'>
}

/** The countries list never changes while the process runs, so its text is made once. */
let countriesText: string | undefined

const tags = ['C. Balance']
const security = [{balanceBasic: []}]

const ERROR_TEXT: Record<number, string> = {
  400: 'The body cannot be parsed or lacks type, amount or member_details',
  401: 'Authentication failed or the client has no balance permission',
  403: 'The withdrawal type is restricted for this person, or the membership is inactive',
  404: 'No such account or transaction',
  405: 'Method not allowed (the Allow header lists the methods served)',
  413: 'Body larger than 16 KiB',
  415: 'The body is not declared as application/json',
  422: 'Member details missing or invalid, amount not positive, insufficient funds, or a reused Idempotency-Key',
  503: 'The store is busy or unavailable; retry after Retry-After seconds',
}
const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, {description: ERROR_TEXT[s] ?? 'error', content: {'application/json': {schema: messageSchema}}}]))
const json = <T extends z.ZodType>(schema: T, description: string) => ({description, content: {'application/json': {schema}}})

const accountParams = z.object({
  key: z.enum(ACCOUNT_KEYS).openapi({description: 'How {id} identifies the person: user_id, NPI or AMA ME number', example: 'user_id'}),
  id: z.string().openapi({example: '1'}),
})

const summaryRoute = createRoute({
  method: 'get',
  path: '/balance/{key}/{id}/summary',
  tags,
  security,
  operationId: 'getBalanceSummary',
  summary: 'Account summary',
  request: {params: accountParams},
  responses: {200: json(summarySchema, 'The account summary'), ...errors(401, 404, 405, 503)},
})
const transactionsRoute = createRoute({
  method: 'get',
  path: '/balance/{key}/{id}/transactions',
  tags,
  security,
  operationId: 'listBalanceTransactions',
  summary: 'Every transaction of the account, oldest first, with the running balance',
  request: {params: accountParams},
  responses: {200: json(transactionListSchema, 'Transactions (list form)'), ...errors(401, 404, 405, 503)},
})
const transactionRoute = createRoute({
  method: 'get',
  path: '/balance/transactions/{id}',
  tags,
  security,
  operationId: 'getBalanceTransaction',
  summary: 'One transaction',
  request: {params: z.object({id: z.string().openapi({format: 'uuid', example: '0b7e7c1e-8f5a-4c53-9a55-0c2f5d1d1a10'})})},
  responses: {200: json(transactionSchema, 'The transaction'), ...errors(401, 404, 405, 503)},
})
const withdrawalTypesRoute = createRoute({
  method: 'get',
  path: '/balance/{key}/{id}/withdrawal_types',
  tags,
  security,
  operationId: 'listWithdrawalTypes',
  summary: 'Withdrawal types this person may use',
  request: {params: accountParams},
  responses: {200: json(z.array(withdrawalTypeSchema), 'Withdrawal types'), ...errors(401, 404, 405, 503)},
})
const withdrawRoute = createRoute({
  method: 'post',
  path: '/balance/{key}/{id}/withdrawals',
  tags,
  security,
  operationId: 'createWithdrawal',
  summary: 'Withdraw funds',
  request: {
    params: accountParams,
    headers: z.object({
      'idempotency-key': z
        .string()
        .regex(/^[\x21-\x7e]{1,255}$/)
        .optional()
        .openapi({description: 'Same key and body: the first answer again; same key, other body: 422', example: 'order-8842-payout'}),
    }),
    body: {
      required: true,
      content: {
        'application/json': {
          schema: withdrawalBodySchema,
          // The demo's first member, who has funds and a PayPal payout.
          example: {type: 'PAYPAL', amount: 10.5, member_details: {first_name: 'Dana', last_name: 'Whitfield', email: 'dana.whitfield@example.com'}},
        },
      },
    },
  },
  responses: {201: json(withdrawalCreatedSchema, 'Created; uri is the path of the new transaction'), ...errors(400, 401, 403, 404, 405, 413, 415, 422, 503)},
})
const countriesRoute = createRoute({
  method: 'get',
  path: '/balance/countries',
  tags,
  security,
  operationId: 'listCountries',
  summary: 'ISO 3166-1 countries, for the country member detail',
  responses: {200: json(z.array(countrySchema), 'Countries'), ...errors(401, 405)},
})
const regionsRoute = createRoute({
  method: 'get',
  path: '/balance/countries/{countryCode}/regions',
  tags,
  security,
  operationId: 'listRegions',
  summary: 'ISO 3166-2 regions of a country, for the region member detail',
  request: {params: z.object({countryCode: z.string().openapi({example: 'US'})})},
  responses: {200: json(z.array(regionSchema), 'Regions'), ...errors(401, 404, 405)},
})

/**
 * Interface C's answer to a request its schema refuses: a path that names no account is 404 (as
 * the service says for an unknown person), a body or header that cannot be used is 400.
 */
const refuseBalanceRequest: SchemaRefusal = (failure, c) => {
  if (failure.target === 'param') {
    const key = c.req.param('key')
    return new AppError(
      'not_found',
      key !== undefined && !(ACCOUNT_KEYS as readonly string[]).includes(key) ? `"${key}" is not an account key; use user_id, npi or me` : 'no such resource',
    )
  }
  if (failure.target === 'json') return new AppError('bad_request', describeZodError(failure.error))
  return invalidRequest(failure, c)
}

/**
 * The amount exactly as the client wrote it. The body has been parsed (and validated) as JSON
 * already; a JSON number is read again from the raw text, so 0.1000000000000000055 stays the
 * amount sent rather than the double nearest to it.
 */
function exactAmount(raw: string, parsed: number | string): string | number {
  if (typeof parsed === 'string') return parsed
  const body = parseLossless(raw) as {amount?: unknown}
  return isLosslessNumber(body.amount) ? body.amount.toString() : parsed
}

/** Interface C as the app serves it. */
export const balanceInterface: ServedInterface = {label: 'C', title: 'balances (C)', prefixes: ['/balance'], ownRouter: true, routes: (deps) => balanceRoutes(deps)}

export function balanceRoutes(deps: AppDeps): OpenAPIHono {
  const {db, clock} = deps
  // Plain reads go to the store's read-only connection, so they never wait behind a batch of writes.
  const reader = readerOf(db)
  const app = new OpenAPIHono({defaultHook: schemaHook(refuseBalanceRequest)})

  app.openAPIRegistry.registerComponent('securitySchemes', 'balanceBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'client_id:client_secret of a client with the balance grant',
  })

  app.use('/balance/*', errorShape(renderMessage), async (c, next) => {
    await next()
    // Answers made by sendText carry it already; errors and refusals get it here.
    if (!carriesRequestId(c.res)) c.header('Cache-Control', 'no-store')
  })
  app.use('/balance/*', balanceClientAuth(db, deps.clock))
  app.on('POST', '/balance/:key/:id/withdrawals', async function readRawBody(c, next) {
    if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(requestHeader(c, 'content-type') ?? '')) {
      throw new AppError('unsupported_media_type', 'the body must be JSON, sent with Content-Type: application/json')
    }
    // Read as text first: the JSON validator then parses this same text, and the handler can
    // read the amount from it exactly.
    const text = await requestBodyText(
      c,
      config.http.requestBodyLimitBytes,
      () => new AppError('payload_too_large', `the request body is larger than ${config.http.requestBodyLimitBytes / 1024} KiB`),
    )
    if (!text.trim()) throw new AppError('bad_request', 'a JSON body with type, amount and member_details is required')
    try {
      JSON.parse(text)
    } catch {
      throw new AppError('bad_request', 'the body is not valid JSON')
    }
    // Valid JSON can still be read two ways (a repeated key) or be too deep for the exact-amount
    // reader: both are the caller's mistake, refused here before any reader sees the text.
    checkJsonStructure(text, balanceConfig.bodyMaxDepthLevels)
    await next()
  })

  app.openapi(summaryRoute, async (c) => {
    const {key, id} = c.req.valid('param')
    return send(c, await balance.getSummary(reader, await balance.resolveAccountHolder(reader, key, id)))
  })

  app.openapi(transactionsRoute, async (c) => {
    const {key, id} = c.req.valid('param')
    return send(c, await balance.listTransactions(reader, await balance.resolveAccountHolder(reader, key, id)))
  })

  app.openapi(transactionRoute, async (c) => send(c, await balance.getTransaction(reader, c.req.valid('param').id)))

  app.openapi(withdrawalTypesRoute, async (c) => {
    const {key, id} = c.req.valid('param')
    return send(c, await balance.listWithdrawalTypes(reader, await balance.resolveAccountHolder(reader, key, id)))
  })

  app.openapi(withdrawRoute, async (c) => {
    const metrics = metricsOf(db)?.of(balanceMetrics)
    let result: balance.WithdrawalResult
    try {
      const {key, id} = c.req.valid('param')
      const member = await balance.resolveAccountHolder(db, key, id)
      const idempotencyKey = parseIdempotencyKey(c.req.valid('header')['idempotency-key'])
      const body = c.req.valid('json')
      const request = {...body, amount: exactAmount(await c.req.text(), body.amount)}
      result = await balance.createWithdrawal(db, member, request, {now: clock.now(), clientId: c.get('balanceClientId'), idempotencyKey})
    } catch (error) {
      const reason = metrics && balance.refusalReason(error)
      if (reason) metrics.refused[reason].inc()
      throw error
    }
    metrics?.[result.replayed ? 'replays' : 'created'].inc()
    return send(c, result.created, 201, {Location: result.created.uri, ...(result.replayed ? {'Idempotent-Replayed': 'true'} : {})})
  })

  app.openapi(countriesRoute, (c) => {
    countriesText ??= toJson(listCountries())
    return sendText(c, countriesText)
  })

  app.openapi(regionsRoute, (c) => {
    const {countryCode} = c.req.valid('param')
    const regions = regionsOf(countryCode.toUpperCase())
    if (!regions) throw new AppError('not_found', `no country with alpha-2 code "${countryCode}" (see /balance/countries)`)
    return send(c, regions)
  })

  for (const route of [summaryRoute, transactionsRoute, transactionRoute, withdrawalTypesRoute, countriesRoute, regionsRoute]) {
    app.all(route.getRoutingPath(), methodNotAllowed('GET'))
  }
  app.all(withdrawRoute.getRoutingPath(), methodNotAllowed('POST'))
  return app
}
