import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {ManualClock} from '../../../src/lib/clock.js'
import type {RegisteredClient} from '../../../src/registry/service.js'
import type {TestContext} from '../../helpers/app.js'
import {openTestStore} from '../../helpers/store.js'
import {authorizeParams, authorizeUrl, decide, REDIRECT, setupClientAndMember} from './flow.js'

/**
 * The issuer of an app given its address and the hosts it answers to, as `serve` makes it: the
 * address it was given, whatever allowed name a request used, and a 421 for any other name.
 */
const BASE = 'https://panel.example.com'

async function appWithHosts(): Promise<TestContext> {
  const store = await openTestStore()
  const clock = new ManualClock()
  const logs: string[] = []
  // `localhost` is what app.request's relative URLs name (the sign-in helpers use them).
  const app = createApp({store, clock, log: (line) => logs.push(line), demo: true, baseUrl: BASE, allowedHosts: ['panel.example.com', 'localhost', '127.0.0.1:8080']})
  return {store, db: store.db, clock, app, logs}
}

describe('the issuer with deps.baseUrl and deps.allowedHosts', () => {
  let ctx: TestContext
  let client: RegisteredClient
  beforeEach(async () => {
    ctx = await appWithHosts()
    client = (await setupClientAndMember(ctx)).client
  })
  afterEach(async () => ctx.store.close())

  it('the metadata names the base URL for every allowed name, and another name gets 421 and no metadata', async () => {
    for (const origin of [BASE, 'http://panel.example.com', 'http://localhost', 'http://127.0.0.1:8080']) {
      const res = await ctx.app.request(`${origin}/.well-known/oauth-authorization-server`)
      expect(res.status, origin).toBe(200)
      const metadata = (await res.json()) as {issuer: string; authorization_endpoint: string; service_documentation: string}
      expect(metadata.issuer, origin).toBe(BASE)
      expect(metadata.authorization_endpoint).toBe(`${BASE}/oauth/authorize`)
      expect(metadata.service_documentation).toBe(`${BASE}/docs`)
    }
    for (const origin of ['http://evil.example', 'http://127.0.0.1:8081', 'http://panel.example.com.evil.example']) {
      const res = await ctx.app.request(`${origin}/.well-known/oauth-authorization-server`)
      expect(res.status, origin).toBe(421)
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(((await res.json()) as {message: string}).message).toMatch(/^this service does not answer for the host "/)
    }
  })

  it('every redirect back to the client names the base URL as iss; a request for another host is not redirected at all', async () => {
    const allowed = await decide(ctx, authorizeParams(client.client_id), 'allow')
    expect(allowed.searchParams.get('iss')).toBe(BASE)
    const bad = authorizeUrl(authorizeParams(client.client_id, {scope: 'everything'}))
    const error = await ctx.app.request(`http://127.0.0.1:8080${bad}`)
    expect(error.status).toBe(302)
    const location = new URL(error.headers.get('location')!)
    expect(location.origin + location.pathname).toBe(REDIRECT)
    expect(location.searchParams.get('iss')).toBe(BASE)
    const refused = await ctx.app.request(`http://evil.example${bad}`)
    expect(refused.status).toBe(421)
    expect(refused.headers.get('location')).toBeNull()
  })

  it("the demo callback's curl line and the home page's links name the base URL, asked by any allowed name", async () => {
    const code = (await decide(ctx, authorizeParams(client.client_id), 'allow')).searchParams.get('code')!
    const callback = await (await ctx.app.request(`http://localhost/demo/callback?code=${code}`)).text()
    expect(callback).toContain(`curl -s -X POST ${BASE}/oauth/token`)
    const home = await (await ctx.app.request('http://127.0.0.1:8080/')).text()
    expect(home).toContain(`curl -s -u demo-client:demo-client-secret ${BASE}/balance/user_id/1/summary`)
    expect(home).not.toContain('127.0.0.1')
    expect((await ctx.app.request('http://evil.example/')).status).toBe(421)
    expect((await ctx.app.request(`http://evil.example/demo/callback?code=${code}`)).status).toBe(421)
  })

  it('/healthz answers whatever the host, and the 421s are in the access log', async () => {
    expect((await ctx.app.request('http://10.0.0.7/healthz')).status).toBe(200)
    await ctx.app.request('http://evil.example/openapi.json')
    expect(ctx.logs.some((line) => / GET \/openapi\.json 421 /.test(line))).toBe(true)
  })
})
