import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {freshApp, type TestContext} from '../helpers/app.js'

/*
 * What every interface's requests share: /healthz, one log line per request, and the request id.
 * Each interface's own operations (documented in /openapi.json, and a real 200 to the right
 * caller) are in its folder's operations.test.ts.
 */
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
})
