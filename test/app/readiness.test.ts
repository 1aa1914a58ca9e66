import {sql} from 'kysely'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {Readiness} from '../../src/deps.js'
import {seedDemo} from '../../src/demo.js'
import {freshApp, type TestContext} from '../helpers/app.js'
import {basicAuth} from '../helpers/http-basic.js'

/*
 * serve's start-up and stop as the app sees them: `serve --demo` binds its socket, then seeds, and
 * until the seed is done every path but the probes answers 503 with Retry-After (a sign-in before
 * the demo member exists would be a 401, a withdrawal before the seed's credits a wrong balance).
 * Here the demo data is seeded first and the phase held at "starting", so every refused request
 * is one that would have written to the store had it been let through.
 */
const BASE = 'http://127.0.0.1:8080'
const REDIRECT = `${BASE}/demo/callback`
const AUTHORIZE = `${BASE}/oauth/authorize?${new URLSearchParams({client_id: 'demo-client', redirect_uri: REDIRECT, response_type: 'code', state: 's1'})}`
const DEMO_BASIC = basicAuth('demo-client', 'demo-client-secret')
const WITHDRAWAL = {type: 'PAYPAL', amount: 10, member_details: {first_name: 'Dana', last_name: 'Whitfield', email: 'dana@example.com'}}

describe('readiness: starting, ready, stopping', () => {
  let ctx: TestContext
  const readiness: Readiness = {phase: 'starting', reason: 'seeding the demo data set'}
  beforeEach(async () => {
    readiness.phase = 'starting'
    ctx = await freshApp({demo: true, readiness})
    await seedDemo(ctx.store, BASE, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const withdraw = () =>
    ctx.app.request(`${BASE}/balance/user_id/1/withdrawals`, {
      method: 'POST',
      headers: {authorization: DEMO_BASIC, 'content-type': 'application/json'},
      body: JSON.stringify(WITHDRAWAL),
    })
  const search = () => {
    const end = ctx.clock.now()
    const start = new Date(end.getTime() - 365 * 86_400_000)
    const query = new URLSearchParams({'terms[]': 'sepsis', start: start.toISOString(), end: end.toISOString()})
    return ctx.app.request(`${BASE}/conversations/summary?${query}`, {
      headers: {accept: 'application/vnd.service-v1+json', 'x-service-conversation-api-key': 'mpk_demo_conversations_key'},
    })
  }
  /** The sign-in form as a browser posts it: the hidden fields and cookie of the authorize page it was shown. */
  const signIn = async (page?: Response) => {
    const html = page ? await page.text() : ''
    const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]))
    const cookie = (page?.headers.getSetCookie() ?? []).map((line) => line.split(';')[0]).join('; ')
    const form = {client_id: 'demo-client', redirect_uri: REDIRECT, response_type: 'code', state: 's1', ...fields, email: 'demo.doctor@medpanel.test', password: 'demo-password'}
    return ctx.app.request(`${BASE}/oauth/session`, {
      method: 'POST',
      headers: {origin: BASE, 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? {cookie} : {})},
      body: new URLSearchParams(form),
    })
  }
  /** Every table's row count: what a refused request must leave as it was. */
  const rowCounts = async () => {
    const counts: Record<string, number> = {}
    for (const table of await ctx.db.introspection.getTables()) {
      const {rows} = await sql<{n: number | string}>`select count(*) as n from ${sql.table(table.name)}`.execute(ctx.db)
      counts[table.name] = Number(rows[0]!.n)
    }
    return counts
  }
  const probe = async (path: string) => {
    const res = await ctx.app.request(`${BASE}${path}`)
    return {status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json()}
  }

  it('while starting, answers every interface 503 with Retry-After, through the error path, and writes nothing', async () => {
    const before = await rowCounts()
    const refused = {
      'the authorize page': await ctx.app.request(AUTHORIZE),
      'a sign-in': await signIn(),
      'a withdrawal': await withdraw(),
      'a search (E)': await search(),
      'the home page': await ctx.app.request(`${BASE}/`),
      'the OpenAPI document': await ctx.app.request(`${BASE}/openapi.json`),
      'a path nobody serves': await ctx.app.request(`${BASE}/nowhere`),
    }
    for (const [what, res] of Object.entries(refused)) {
      expect(res.status, what).toBe(503)
      expect(res.headers.get('retry-after'), what).toBe('1')
      expect(res.headers.get('cache-control'), what).toBe('no-store')
      expect(res.headers.getSetCookie(), what).toEqual([])
      expect(await res.json(), what).toEqual({message: 'medpanel is starting (seeding the demo data set); try again in a moment'})
    }
    expect(await rowCounts()).toEqual(before)
    // One access line per request, and no error line: a refusal while starting is no failure.
    expect(ctx.logs).toHaveLength(Object.keys(refused).length)
    expect(ctx.logs.every((line) => / 503 /.test(line))).toBe(true)
  })

  it('while starting, the probes answer: /livez 200, /readyz and /healthz 503 saying why', async () => {
    expect(await probe('/livez')).toEqual({status: 200, retryAfter: null, body: {status: 'alive'}})
    for (const path of ['/readyz', '/healthz']) {
      expect(await probe(path), path).toEqual({status: 503, retryAfter: '1', body: {status: 'starting', reason: 'seeding the demo data set', version: expect.any(String)}})
    }
    // /metrics is not held back either (here it refuses a caller it cannot place on loopback).
    expect((await ctx.app.request(`${BASE}/metrics`)).status).not.toBe(503)
  })

  it('once ready, every interface answers, the probes 200', async () => {
    readiness.phase = 'ready'
    const page = await ctx.app.request(AUTHORIZE)
    expect(page.status).toBe(200)
    const signedIn = await signIn(page)
    expect(signedIn.status).toBe(303)
    expect((await withdraw()).status).toBe(201)
    expect((await search()).status).toBe(200)
    expect(await probe('/livez')).toEqual({status: 200, retryAfter: null, body: {status: 'alive'}})
    for (const path of ['/readyz', '/healthz']) expect(await probe(path), path).toEqual({status: 200, retryAfter: null, body: {status: 'ok', version: expect.any(String)}})
  })

  it('while stopping, requests still reaching it are served (the drain), and the probes say not ready, alive', async () => {
    readiness.phase = 'stopping'
    readiness.reason = 'SIGTERM received; finishing requests in flight'
    expect((await withdraw()).status).toBe(201)
    expect((await ctx.app.request(AUTHORIZE)).status).toBe(200)
    expect((await search()).status).toBe(200)
    expect(await probe('/livez')).toEqual({status: 200, retryAfter: null, body: {status: 'alive'}})
    for (const path of ['/readyz', '/healthz']) {
      expect(await probe(path), path).toEqual({
        status: 503,
        retryAfter: '1',
        body: {status: 'stopping', reason: 'SIGTERM received; finishing requests in flight', version: expect.any(String)},
      })
    }
  })
})
