import {OpenAPIHono} from '@hono/zod-openapi'
import {narrowParts, type StoreParts} from '../../store/database.js'
import type {Context, MiddlewareHandler, TypedResponse} from 'hono'
import type {RouteDeps, ServedInterface} from '../../deps.js'
import {AppError, type Challenge} from '../../errors.js'
import {basicClientAuth} from '../../http/basic-auth.js'
import {errorShape, renderMessage} from '../../http/error-shape.js'
import {carriesRequestId, requestBodyText, requestHeader, responseHeader, textResponse} from '../../http/fast.js'
import {clientAddress} from '../../http/client-address.js'
import {methodNotAllowed} from '../../http/method-not-allowed.js'
import {invalidRequest, schemaHook, type SchemaRefusal} from '../../http/validation.js'
import {describeZodError} from '../../lib/validate.js'
import {authenticateClient, hasGrant} from '../../registry/service.js'
import type {BalanceDb as Db} from './tables.js'
import type {Clock} from '../../lib/clock.js'
import type {Metrics} from '../../metrics/metrics.js'
import {toJson} from '../../lib/exact-json.js'
import {listCountries} from '../../lib/iso3166.js'
import {regionsOf} from '../../lib/iso3166-regions.js'
import {config} from '../../config.js'
import {balanceMetrics} from './metrics.js'
import {readWithdrawalText, withdrawalRequest} from './body.js'
import type {ExactJson} from './decimal-json.js'
import {countriesRoute, regionsRoute, summaryRoute, transactionRoute, transactionsRoute, withdrawalTypesRoute, withdrawRoute, withdrawServedRoute} from './openapi.js'
import {ACCOUNT_KEYS, parseIdempotencyKey, type WithdrawalRequest} from './schema.js'
import * as balance from './service.js'

/** What C's own middleware hands its handlers: the authenticated client, and a withdrawal's body as read once. */
export type BalanceEnv = {Variables: {balanceClientId: string; withdrawalJson: ExactJson}}
type BalanceContext = Context<BalanceEnv>

const BALANCE_CHALLENGE: Challenge = {scheme: 'Basic', realm: 'medpanel balance'}

/** Every refusal of a balance client is the spec's 401 ("authentication failed or no permission"). */
const refused = (reason: string) => new AppError('unauthorized', reason, {challenge: BALANCE_CHALLENGE})

/** HTTP Basic with the client_id and client_secret of a live client holding the `balance` grant. */
export function balanceClientAuth(store: StoreParts<Db>, clock: Clock, metrics?: Metrics): MiddlewareHandler<BalanceEnv> {
  return basicClientAuth({
    missing: () => refused('HTTP Basic authentication with client_id:client_secret is required'),
    async verify({username, password}, c) {
      const client = await authenticateClient(narrowParts(store), username, password, {now: clock.now(), address: clientAddress(c), metrics})
      if (!client) throw refused('client authentication failed')
      if (client.expired_at !== null) throw refused('this client account has expired')
      if (!hasGrant(client, 'balance')) throw refused('this client has no permission for the balance interface')
      return client.id
    },
    accept: (c, clientId) => (c as BalanceContext).set('balanceClientId', clientId),
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
 * The content types a JSON body may be declared with: application/json or a +json type, with
 * parameters and nothing else (the shape @hono/zod-openapi's body validators admit elsewhere).
 */
const JSON_CONTENT_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i

/**
 * A withdrawal's body, read before the route checks the path and headers: JSON declared (415, the
 * one check of it), at most the body limit (413), then the edge parser's first step (400: empty,
 * not JSON, a repeated key, too deep). Its result waits in the context for the handler.
 */
const readWithdrawalBody: MiddlewareHandler<BalanceEnv> = async (c, next) => {
  if (!JSON_CONTENT_TYPE.test(requestHeader(c, 'content-type') ?? '')) {
    throw new AppError('unsupported_media_type', 'the body must be JSON, sent with Content-Type: application/json')
  }
  const limit = config.http.requestBodyLimitBytes
  const text = await requestBodyText(c, limit, () => new AppError('payload_too_large', `the request body is larger than ${limit / 1024} KiB`))
  c.set('withdrawalJson', readWithdrawalText(text))
  await next()
}

/** The edge parser's second step, where the route's body validator stood: after the path and headers. */
function withdrawalOf(c: BalanceContext): WithdrawalRequest {
  const {value, numbers} = c.get('withdrawalJson')
  return withdrawalRequest(value, numbers)
}

/** The path's account and the Idempotency-Key header, as the route validated them. */
interface WithdrawalAddress {
  key: string
  id: string
  idempotencyKey: string | undefined
}

/** POST …/withdrawals: counted by outcome (created, replayed, or refused with its reason). */
async function withdraw(c: BalanceContext, {db, clock, metrics: registry}: RouteDeps, asked: WithdrawalAddress): Promise<TypedResponse<never, 201, 'json'>> {
  const request = withdrawalOf(c)
  const metrics = registry?.of(balanceMetrics)
  let result: balance.WithdrawalResult
  try {
    const member = await balance.resolveAccountHolder(db, asked.key, asked.id)
    const idempotencyKey = parseIdempotencyKey(asked.idempotencyKey)
    result = await balance.createWithdrawal(db, member, request, {now: clock.now(), clientId: c.get('balanceClientId'), idempotencyKey})
  } catch (error) {
    const reason = metrics && balance.refusalReason(error)
    if (reason) metrics.refused[reason].inc()
    throw error
  }
  metrics?.[result.replayed ? 'replays' : 'created'].inc()
  return send(c, result.created, 201, {Location: result.created.uri, ...(result.replayed ? {'Idempotent-Replayed': 'true'} : {})})
}

/**
 * Interface C as the app serves it. The app mounts any interface's sub-app the same way; C's own
 * variables (BalanceEnv) stay typed inside it, so its type is widened only here.
 */
export const balanceInterface: ServedInterface = {
  label: 'C',
  title: 'balances (C)',
  prefixes: ['/balance'],
  ownRouter: true,
  routes: (deps) => balanceRoutes(deps) as unknown as OpenAPIHono,
}

export function balanceRoutes(deps: RouteDeps): OpenAPIHono<BalanceEnv> {
  // Plain reads go to the store's read-only connection, so they never wait behind a batch of writes.
  const {reader, clock} = deps
  const app = new OpenAPIHono<BalanceEnv>({defaultHook: schemaHook(refuseBalanceRequest)})
  app.openAPIRegistry.registerComponent('securitySchemes', 'balanceBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'client_id:client_secret of a client with the balance grant',
  })
  app.use('/balance/*', errorShape(renderMessage), async (c, next) => {
    await next()
    // Answers made by sendText, and errors rendered by renderMessage, carry it already; anything
    // else Hono made (its plain 404 text, say) gets it here.
    if (!carriesRequestId(c.res)) responseHeader(c, 'Cache-Control', 'no-store')
  })
  app.use('/balance/*', balanceClientAuth(deps, clock, deps.metrics))
  app.on('POST', '/balance/:key/:id/withdrawals', readWithdrawalBody)

  const holder = (c: {req: {valid(target: 'param'): {key: string; id: string}}}) => {
    const {key, id} = c.req.valid('param')
    return balance.resolveAccountHolder(reader, key, id)
  }
  app.openapi(summaryRoute, async (c) => send(c, await balance.getSummary(reader, await holder(c))))
  app.openapi(transactionsRoute, async (c) => send(c, await balance.listTransactions(reader, await holder(c))))
  app.openapi(transactionRoute, async (c) => send(c, await balance.getTransaction(reader, c.req.valid('param').id)))
  app.openapi(withdrawalTypesRoute, async (c) => send(c, await balance.listWithdrawalTypes(reader, await holder(c))))
  // The document describes the withdrawal whole (its body included); the served route leaves the body to the edge parser.
  app.openAPIRegistry.registerPath(withdrawRoute)
  app.openapi(withdrawServedRoute, (c) => withdraw(c, deps, {...c.req.valid('param'), idempotencyKey: c.req.valid('header')['idempotency-key']}))
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
