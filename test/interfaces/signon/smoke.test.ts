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

  it('publishes an OpenAPI document generated from the route schemas', async () => {
    const res = await ctx.app.request('/openapi.json')
    const doc = (await res.json()) as {paths: Record<string, unknown>}
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/oauth/token', '/user/oauth/token/info', '/oauth/user/info']))
  })
})
