import {OpenAPIHono} from '@hono/zod-openapi'
import {z} from '@hono/zod-openapi'
import type {Context, MiddlewareHandler} from 'hono'
import {bodyLimit} from 'hono/body-limit'
import {auth as parseBasicAuth} from 'hono/utils/basic-auth'
import type {AppDeps} from '../../deps.js'
import {AppError} from '../../errors.js'
import {errorShape, renderMessage} from '../../http/error-shape.js'
import {rejectInvalid} from '../../http/validation.js'
import {authenticateClient, hasGrant} from '../../registry/service.js'
import {clientAddress} from '../../http/fast.js'
import type {Clock} from '../../lib/clock.js'
import type {Db} from '../../store/database.js'
import {readerOf} from '../../store/db.js'
import {toJson} from './decimal-json.js'
import {listCountries, regionsOf} from './reference-data.js'
import {
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

declare module 'hono' {
  interface ContextVariableMap {
    balanceClientId: string
  }
}

const CHALLENGE = {'WWW-Authenticate': 'Basic realm="medpanel balance", charset="UTF-8"'}

/**
 * HTTP Basic with the client_id and client_secret of a live client holding the `balance` grant.
 * Every failure is the spec's 401 ("authentication failed or no permission").
 */
export function balanceClientAuth(db: Db, clock: Clock): MiddlewareHandler {
  return async function requireBalanceClient(c, next) {
    const credentials = parseBasicAuth(c.req.raw)
    if (!credentials) throw new AppError('unauthorized', 'HTTP Basic authentication with client_id:client_secret is required', {headers: CHALLENGE})
    const client = await authenticateClient(db, credentials.username, credentials.password, {now: clock.now(), address: clientAddress(c)})
    if (!client) throw new AppError('unauthorized', 'client authentication failed', {headers: CHALLENGE})
    if (client.expired_at !== null) throw new AppError('unauthorized', 'this client account has expired', {headers: CHALLENGE})
    if (!hasGrant(client, 'balance')) throw new AppError('unauthorized', 'this client has no permission for the balance interface', {headers: CHALLENGE})
    c.set('balanceClientId', client.id)
    await next()
  }
}

/** A JSON answer whose amounts are written from their exact decimal text. */
function send(c: Context, value: unknown, status: 200 | 201 = 200, headers: Record<string, string> = {}): Response {
  return c.body(toJson(value), status, {'Content-Type': 'application/json; charset=UTF-8', ...headers})
}

/** The countries list never changes while the process runs, so its text is made once. */
let countriesText: string | undefined

const PATHS = {
  summary: '/balance/:key/:id/summary',
  transactions: '/balance/:key/:id/transactions',
  transaction: '/balance/transactions/:id',
  withdrawalTypes: '/balance/:key/:id/withdrawal_types',
  withdrawals: '/balance/:key/:id/withdrawals',
  countries: '/balance/countries',
  regions: '/balance/countries/:countryCode/regions',
} as const

export function balanceRoutes(deps: AppDeps): OpenAPIHono {
  const {db, clock} = deps
  // Plain reads go to the store's read-only connection, so they never wait behind a batch of writes.
  const reader = readerOf(db)
  const app = new OpenAPIHono({defaultHook: rejectInvalid})

  app.use('/balance/*', errorShape(renderMessage), async (c, next) => {
    await next()
    c.header('Cache-Control', 'no-store')
  })
  app.use('/balance/*', balanceClientAuth(db, deps.clock))
  app.use(
    PATHS.withdrawals,
    bodyLimit({
      maxSize: 16 * 1024,
      onError: () => {
        throw new AppError('payload_too_large', 'the request body is larger than 16 KiB')
      },
    }),
  )

  app.get(PATHS.summary, async (c) => {
    const member = await balance.resolveAccountHolder(reader, c.req.param('key'), c.req.param('id'))
    return send(c, await balance.getSummary(reader, member))
  })

  app.get(PATHS.transactions, async (c) => {
    const member = await balance.resolveAccountHolder(reader, c.req.param('key'), c.req.param('id'))
    return send(c, await balance.listTransactions(reader, member))
  })

  app.get(PATHS.transaction, async (c) => send(c, await balance.getTransaction(reader, c.req.param('id'))))

  app.get(PATHS.withdrawalTypes, async (c) => {
    const member = await balance.resolveAccountHolder(reader, c.req.param('key'), c.req.param('id'))
    return send(c, await balance.listWithdrawalTypes(reader, member))
  })

  app.post(PATHS.withdrawals, async (c) => {
    const member = await balance.resolveAccountHolder(db, c.req.param('key'), c.req.param('id'))
    const idempotencyKey = parseIdempotencyKey(c.req.header('idempotency-key'))
    const text = await c.req.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new AppError('bad_request', text.trim() ? 'the body is not valid JSON' : 'a JSON body with type, amount and member_details is required')
    }
    const result = await balance.createWithdrawal(db, member, body, {now: clock.now(), clientId: c.get('balanceClientId'), idempotencyKey})
    return send(c, result.created, 201, {Location: result.created.uri, ...(result.replayed ? {'Idempotent-Replayed': 'true'} : {})})
  })

  app.get(PATHS.countries, (c) => c.body((countriesText ??= toJson(listCountries())), 200, {'Content-Type': 'application/json; charset=UTF-8'}))

  app.get(PATHS.regions, (c) => {
    const code = c.req.param('countryCode').toUpperCase()
    const regions = regionsOf(code)
    if (!regions) throw new AppError('not_found', `no country with alpha-2 code "${c.req.param('countryCode')}" (see /balance/countries)`)
    return send(c, regions)
  })

  // Known paths with a method they do not support answer 405 and say which ones they do.
  for (const [path, allow] of [
    [PATHS.summary, 'GET, HEAD'],
    [PATHS.transactions, 'GET, HEAD'],
    [PATHS.transaction, 'GET, HEAD'],
    [PATHS.withdrawalTypes, 'GET, HEAD'],
    [PATHS.withdrawals, 'POST'],
    [PATHS.countries, 'GET, HEAD'],
    [PATHS.regions, 'GET, HEAD'],
  ] as const) {
    app.all(path, (c) => {
      throw new AppError('method_not_allowed', `${c.req.method} is not supported here; use ${allow.replace(', HEAD', '')}`, {headers: {Allow: allow}})
    })
  }

  registerDocs(app)
  return app
}

/** Describes the routes in /openapi.json (the handlers above parse bodies themselves, for exact amounts). */
function registerDocs(app: OpenAPIHono): void {
  const registry = app.openAPIRegistry
  registry.registerComponent('securitySchemes', 'balanceBasic', {type: 'http', scheme: 'basic', description: 'client_id:client_secret of a client with the balance grant'})
  const tags = ['C. Balance']
  const security = [{balanceBasic: []}]
  const errors = (...statuses: number[]) =>
    Object.fromEntries(statuses.map((s) => [s, {description: ERROR_TEXT[s] ?? 'error', content: {'application/json': {schema: messageSchema}}}]))
  const accountParams = z.object({
    key: z.enum(['user_id', 'npi', 'me']).openapi({description: 'How {id} identifies the person'}),
    id: z.string().openapi({example: '1'}),
  })
  const json = <T extends z.ZodType>(schema: T, description: string) => ({description, content: {'application/json': {schema}}})
  registry.registerPath({
    method: 'get',
    path: '/balance/{key}/{id}/summary',
    tags,
    security,
    summary: 'Account summary',
    request: {params: accountParams},
    responses: {200: json(summarySchema, 'The account summary'), ...errors(401, 404, 405)},
  })
  registry.registerPath({
    method: 'get',
    path: '/balance/{key}/{id}/transactions',
    tags,
    security,
    summary: 'Every transaction of the account, oldest first, with the running balance',
    request: {params: accountParams},
    responses: {200: json(transactionListSchema, 'Transactions (list form)'), ...errors(401, 404, 405)},
  })
  registry.registerPath({
    method: 'get',
    path: '/balance/transactions/{id}',
    tags,
    security,
    summary: 'One transaction',
    request: {params: z.object({id: z.string().openapi({format: 'uuid'})})},
    responses: {200: json(transactionSchema, 'The transaction'), ...errors(401, 404, 405)},
  })
  registry.registerPath({
    method: 'get',
    path: '/balance/{key}/{id}/withdrawal_types',
    tags,
    security,
    summary: 'Withdrawal types this person may use',
    request: {params: accountParams},
    responses: {200: json(z.array(withdrawalTypeSchema), 'Withdrawal types'), ...errors(401, 404, 405)},
  })
  registry.registerPath({
    method: 'post',
    path: '/balance/{key}/{id}/withdrawals',
    tags,
    security,
    summary: 'Withdraw funds',
    request: {
      params: accountParams,
      headers: z.object({'idempotency-key': z.string().optional().openapi({description: 'Same key and body: the first answer again; same key, other body: 422'})}),
      body: {required: true, content: {'application/json': {schema: withdrawalBodySchema}}},
    },
    responses: {201: json(withdrawalCreatedSchema, 'Created; uri is the path of the new transaction'), ...errors(400, 401, 403, 404, 405, 413, 422, 503)},
  })
  registry.registerPath({
    method: 'get',
    path: '/balance/countries',
    tags,
    security,
    summary: 'ISO 3166-1 countries, for the country member detail',
    responses: {200: json(z.array(countrySchema), 'Countries'), ...errors(401, 405)},
  })
  registry.registerPath({
    method: 'get',
    path: '/balance/countries/{countryCode}/regions',
    tags,
    security,
    summary: 'ISO 3166-2 regions of a country, for the region member detail',
    request: {params: z.object({countryCode: z.string().openapi({example: 'US'})})},
    responses: {200: json(z.array(regionSchema), 'Regions'), ...errors(401, 404, 405)},
  })
}

const ERROR_TEXT: Record<number, string> = {
  400: 'The body cannot be parsed or lacks type, amount or member_details',
  401: 'Authentication failed or the client has no balance permission',
  403: 'The withdrawal type is restricted for this person',
  404: 'No such account or transaction',
  405: 'Method not allowed',
  413: 'Body too large',
  422: 'Member details missing or invalid, amount not positive, insufficient funds, or a reused Idempotency-Key',
  503: 'The store is busy; retry',
}
