import fc from 'fast-check'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {setupClientAndMember} from './flow.js'

/** Whatever a client sends, sign-on answers with a client error, never a 500 or a stack trace. */
describe('garbage never reaches a 500', () => {
  let ctx: TestContext
  let clientId: string
  beforeAll(async () => {
    ctx = await freshApp()
    clientId = (await setupClientAndMember(ctx)).client.client_id
  })
  afterAll(async () => ctx.store.close())

  const names = fc.constantFrom(
    'client_id',
    'redirect_uri',
    'response_type',
    'state',
    'scope',
    'code_challenge',
    'code_challenge_method',
    'grant_type',
    'code',
    'client_secret',
    'code_verifier',
    'csrf_token',
    'decision',
    'email',
    'password',
    'x[]',
    'access_token',
  )
  const values = fc.oneof(
    fc.string(),
    fc.string({unit: 'grapheme', maxLength: 50}),
    fc.constantFrom('', 'authorization_code', 'client_credentials', 'code', 'S256', 'allow', 'https://client.example/callback', 'CLIENT'),
    fc.string({minLength: 2000, maxLength: 3000}),
  )
  const pairs = fc.array(fc.tuple(names, values), {maxLength: 8})
  const paths = fc.constantFrom('/oauth/authorize', '/oauth/session', '/oauth/token', '/user/oauth/token/info', '/oauth/user/info', '/oauth/token/info', '/user/oauth/user/info')
  const methods = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE')
  const contentTypes = fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'multipart/form-data; boundary=x', 'text/plain', '')
  const authorizations = fc.option(
    fc.oneof(
      fc.string(),
      fc.constant('Bearer '),
      fc.constant('Basic Og=='),
      fc.string().map((s) => `Bearer ${s}`),
    ),
  )

  it("answers every random request below 500, in the interface's own shape", async () => {
    await fc.assert(
      fc.asyncProperty(paths, methods, pairs, contentTypes, authorizations, fc.boolean(), async (path, method, fields, type, authorization, inQuery) => {
        const params = new URLSearchParams(fields.map(([k, v]) => [k, v === 'CLIENT' ? clientId : v]))
        const headers: Record<string, string> = {origin: 'http://localhost'}
        if (type) headers['content-type'] = type
        if (authorization) headers.authorization = authorization
        const init: RequestInit = {method, headers}
        if (method !== 'GET' && !inQuery) init.body = type.startsWith('application/json') ? JSON.stringify(Object.fromEntries(params)) : params.toString()
        const url = inQuery || method === 'GET' ? `${path}?${params}` : path
        const res = await ctx.app.request(url, init)
        expect(res.status).toBeLessThan(500)
        const text = await res.text()
        expect(text).not.toMatch(/at .+\.(ts|js):\d+/)
        if (res.headers.get('content-type')?.includes('application/json')) {
          const body = JSON.parse(text) as Record<string, unknown>
          if (res.status >= 400) expect(Object.keys(body).sort()).toEqual(['error', 'error_description'])
        }
      }),
      {numRuns: 300},
    )
    expect(ctx.logs.filter((line) => line.startsWith('error'))).toEqual([])
  })
})
