import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {addMember, registerClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {clientWithKey, query} from '../conversations/helpers.js'

describe('service basics', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('answers /healthz and logs one line per request', async () => {
    const res = await ctx.app.request('/healthz')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({status: 'ok'})
    expect(ctx.logs).toHaveLength(1)
    expect(ctx.logs[0]).toMatch(/GET \/healthz 200/)
  })

  it('names every answer with a request id, the one in its log line; a sane caller id is kept', async () => {
    const ok = await ctx.app.request('/healthz')
    const id = ok.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(ctx.logs.at(-1)).toContain(`id=${id}`)
    const missing = await ctx.app.request('/nope', {headers: {'x-request-id': 'trace-42'}})
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-request-id')).toBe('trace-42')
    const hostile = await ctx.app.request('/healthz', {headers: {'x-request-id': 'a b\u0001<script>'}})
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("routes interface C's paths, which live in a router of their own, beside everything else", async () => {
    expect((await ctx.app.request('/balance/countries')).status).toBe(401)
    expect((await ctx.app.request('/balance/user_id/1/summary')).status).toBe(401)
    expect((await ctx.app.request('/user/oauth/token/info')).status).toBe(401)
  })

  it('publishes an OpenAPI document with the paths of every interface serve answers (A, C, D, E)', async () => {
    const res = await ctx.app.request('/openapi.json')
    expect(res.status).toBe(200)
    const doc = (await res.json()) as {paths: Record<string, Record<string, unknown>>}
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    // The tables under "Calling it" in docs/signon.md, balance.md, pulses.md and conversations.md. Interface B's endpoints are the partner's, not ours.
    const documented = [
      // A: sign-on
      'GET /oauth/authorize',
      'POST /oauth/session',
      'POST /oauth/authorize',
      'POST /oauth/token',
      'GET /user/oauth/token/info',
      'GET /oauth/token/info',
      'GET /user/oauth/user/info',
      'GET /oauth/user/info',
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/revoke',
      'POST /oauth/introspect',
      'GET /oauth/authorized_applications',
      'POST /oauth/authorized_applications/revoke',
      'POST /oauth/sign_out',
      // C: balances
      'GET /balance/{key}/{id}/summary',
      'GET /balance/{key}/{id}/transactions',
      'GET /balance/transactions/{id}',
      'GET /balance/{key}/{id}/withdrawal_types',
      'POST /balance/{key}/{id}/withdrawals',
      'GET /balance/countries',
      'GET /balance/countries/{countryCode}/regions',
      // D: pulse export
      'GET /projects/{projectId}/export',
      'GET /clients/projectsInfo',
      'GET /clients/info',
      // E: conversation search
      'GET /conversations/summary',
      'GET /conversations/data',
    ]
    expect(
      documented.filter((operation) => !operations.includes(operation)),
      'operations missing from /openapi.json',
    ).toEqual([])
  })

  it('answers a real 200 on every interface to a caller with the right credentials', async () => {
    const now = ctx.clock.now()
    const SECRET = 'a-long-enough-test-secret'
    const site = {url: 'https://smoke.example', logo_url: 'https://smoke.example/logo.png'}

    // A: discovery, and a token for a client (used for D below).
    expect((await ctx.app.request('/.well-known/oauth-authorization-server')).status).toBe(200)
    await registerClient(ctx.db, {...site, name: 'Pulse reader', grants: ['pulses']}, now, {id: 'pulse-reader', secret: SECRET})
    const token = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: 'pulse-reader', client_secret: SECRET}))
    expect(token.status).toBe(200)
    const {access_token: accessToken} = (await token.json()) as {access_token: string}

    // C: HTTP Basic as a client holding the balance grant.
    await registerClient(ctx.db, {...site, name: 'Payer', grants: ['balance']}, now, {id: 'payer', secret: SECRET})
    const member = await addMember(
      ctx.db,
      {email: 'smoke@clinic.example', password: 'correct horse battery', first_name: 'Sam', last_name: 'Oke', country: 'US', specialty: 'Oncology'},
      now,
    )
    const balance = await ctx.app.request(`/balance/user_id/${member.user_id}/summary`, {headers: {authorization: `Basic ${Buffer.from(`payer:${SECRET}`).toString('base64')}`}})
    expect(balance.status).toBe(200)
    expect(await balance.json()).toEqual({available_funds: 0, currency: 'USD', preferred_status: false})

    // D: the bearer token of a client holding the pulses grant.
    const info = await ctx.app.request('/clients/info', {headers: {authorization: `Bearer ${accessToken}`}})
    expect(info.status).toBe(200)
    expect(await info.json()).toEqual({ClientInfo: {Admin: false}, ProjectInfo: []})

    // E: the API key of a client holding the conversations grant.
    const {key} = await clientWithKey(ctx)
    const search = await ctx.app.request(`/conversations/summary?${query(['sepsis'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {
      headers: {'X-Service-Conversation-API-Key': key.api_key},
    })
    expect(search.status).toBe(200)
    expect(await search.json()).toMatchObject({summary: {terms: [{term: 'sepsis', matches: 0}], uniques: {posts: 0, comments: 0}}})
  })
})
