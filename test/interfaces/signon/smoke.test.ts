import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {freshApp, type TestContext} from '../../helpers/app.js'

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

  it('routes interface C\'s paths, which live in a router of their own, beside everything else', async () => {
    expect((await ctx.app.request('/balance/countries')).status).toBe(401)
    expect((await ctx.app.request('/balance/user_id/1/summary')).status).toBe(401)
    expect((await ctx.app.request('/user/oauth/token/info')).status).toBe(401)
  })

  it('publishes an OpenAPI document generated from the route schemas', async () => {
    const res = await ctx.app.request('/openapi.json')
    const doc = (await res.json()) as {paths: Record<string, unknown>}
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/oauth/token', '/user/oauth/token/info', '/oauth/user/info']))
  })
})
