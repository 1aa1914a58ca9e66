import {createRoute, z} from '@hono/zod-openapi'
import {
  ACCOUNT_KEYS,
  countrySchema,
  messageSchema,
  regionSchema,
  summarySchema,
  transactionListSchema,
  transactionSchema,
  withdrawalBodySchema,
  withdrawalCreatedSchema,
  withdrawalTypeSchema,
} from './schema.js'

/*
 * Interface C's operations as /openapi.json describes them: paths, parameters, bodies and answers,
 * each by its zod schema (schema.ts). routes.ts serves them.
 */

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

export const summaryRoute = createRoute({
  method: 'get',
  path: '/balance/{key}/{id}/summary',
  tags,
  security,
  operationId: 'getBalanceSummary',
  summary: 'Account summary',
  request: {params: accountParams},
  responses: {200: json(summarySchema, 'The account summary'), ...errors(401, 404, 405, 503)},
})
export const transactionsRoute = createRoute({
  method: 'get',
  path: '/balance/{key}/{id}/transactions',
  tags,
  security,
  operationId: 'listBalanceTransactions',
  summary: 'Every transaction of the account, oldest first, with the running balance',
  request: {params: accountParams},
  responses: {200: json(transactionListSchema, 'Transactions (list form)'), ...errors(401, 404, 405, 503)},
})
export const transactionRoute = createRoute({
  method: 'get',
  path: '/balance/transactions/{id}',
  tags,
  security,
  operationId: 'getBalanceTransaction',
  summary: 'One transaction',
  request: {params: z.object({id: z.string().openapi({format: 'uuid', example: '0b7e7c1e-8f5a-4c53-9a55-0c2f5d1d1a10'})})},
  responses: {200: json(transactionSchema, 'The transaction'), ...errors(401, 404, 405, 503)},
})
export const withdrawalTypesRoute = createRoute({
  method: 'get',
  path: '/balance/{key}/{id}/withdrawal_types',
  tags,
  security,
  operationId: 'listWithdrawalTypes',
  summary: 'Withdrawal types this person may use',
  request: {params: accountParams},
  responses: {200: json(z.array(withdrawalTypeSchema), 'Withdrawal types'), ...errors(401, 404, 405, 503)},
})
export const withdrawRoute = createRoute({
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
export const countriesRoute = createRoute({
  method: 'get',
  path: '/balance/countries',
  tags,
  security,
  operationId: 'listCountries',
  summary: 'ISO 3166-1 countries, for the country member detail',
  responses: {200: json(z.array(countrySchema), 'Countries'), ...errors(401, 405)},
})
export const regionsRoute = createRoute({
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
 * The withdrawal route as it is served: the same path, parameters and headers, validated by the
 * route; its body is read by the edge parser (body.ts) instead of a second JSON validator, so it
 * is kept out of the document, where withdrawRoute describes the operation whole.
 */
export const withdrawServedRoute = createRoute({...withdrawRoute, request: {params: accountParams, headers: withdrawRoute.request.headers}, hide: true})
