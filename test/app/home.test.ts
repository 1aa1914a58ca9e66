import {afterEach, describe, expect, it} from 'vitest'
import {seedDemo} from '../../src/demo.js'
import {freshApp, type TestContext} from '../helpers/app.js'

describe('GET /', () => {
  let ctx: TestContext
  afterEach(() => ctx.store.close())

  it('on a demo site: what this is, the reference, a sign-in link that starts the demo flow, calls to copy', async () => {
    ctx = await freshApp({demo: true})
    await seedDemo(ctx.store, 'http://127.0.0.1:8080', ctx.clock.now())
    const res = await ctx.app.request('http://127.0.0.1:8080/')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
    const page = await res.text()
    expect(page).toContain('<a href="/docs">API reference</a>')
    expect(page).toContain('curl -s -u demo-client:demo-client-secret http://127.0.0.1:8080/balance/user_id/1/summary')
    const link = /<a href="([^"]+)">Sign in as the demo doctor<\/a>/.exec(page)?.[1]?.replace(/&amp;/g, '&')
    expect(link).toBeDefined()
    const authorize = new URL(link!)
    expect(authorize.pathname).toBe('/oauth/authorize')
    expect(authorize.searchParams.get('client_id')).toBe('demo-client')
    // The link works as it is: the sign-in page of the demo client.
    const signIn = await ctx.app.request(link!)
    expect(signIn.status).toBe(200)
    expect(await signIn.text()).toContain('Sign in')
  })

  it("on a demo site: the conversations call's window is the last 365 days, inside the demo's posts", async () => {
    ctx = await freshApp({demo: true})
    await seedDemo(ctx.store, 'http://127.0.0.1:8080', ctx.clock.now())
    const page = (await (await ctx.app.request('http://127.0.0.1:8080/')).text()).replace(/&amp;/g, '&').replace(/&quot;/g, '"')
    const url = new URL(/curl -s "(http:\/\/127\.0\.0\.1:8080\/conversations\/summary\?[^"]+)"/.exec(page)?.[1] ?? 'http://missing/')
    const end = Date.parse(url.searchParams.get('end') ?? '')
    const start = Date.parse(url.searchParams.get('start') ?? '')
    expect(Math.abs(end - ctx.clock.now().getTime())).toBeLessThan(1000)
    expect(end - start).toBe(365 * 86_400_000)
    const res = await ctx.app.request(url.pathname + url.search, {
      headers: {accept: 'application/vnd.service-v1+json', 'x-service-conversation-api-key': 'mpk_demo_conversations_key'},
    })
    expect(res.status).toBe(200)
  })

  it('without the demo: no sign-in link and no published credentials', async () => {
    ctx = await freshApp()
    const page = await (await ctx.app.request('/')).text()
    expect(page).toContain('/openapi.json')
    expect(page).not.toContain('demo-client-secret')
    expect(page).not.toContain('Sign in as the demo doctor')
  })
})
