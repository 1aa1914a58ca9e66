import {createServer, type AddressInfo} from 'node:net'
import {Hono} from 'hono'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {verifyPartner} from '../../../src/interfaces/partner/verify.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {startServer, type RunningServer} from '../../../src/server.js'
import {cliAsync, NPI, referencePartner} from './helpers.js'
import {basicAuth} from '../../helpers/http-basic.js'

const AUTH = {authorization: basicAuth('medpanel', 'pw-0')}
const json = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
  method,
  body: JSON.stringify(body),
  headers: {...AUTH, 'content-type': 'application/json', ...headers},
})
const project = {project_id: 'P 1', name: 'N', duration: 10, status: 'active', project_type: 'real-time', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z'}
const quota = {
  quota_id: 'Q1',
  project_id: 'P 1',
  status: 'open',
  limit: 3,
  incidence_rate: 0.5,
  closes_at: '2026-02-01T00:00:00Z',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  honoraria: 12.5,
}
const member = (i: number) => ({npi: NPI[i]!, honoraria: 50, url: `https://s.example/${i}`})

describe('reference partner (partner-serve)', () => {
  let partner: Awaited<ReturnType<typeof referencePartner>>
  const clock = new ManualClock()
  beforeAll(async () => {
    partner = await referencePartner(clock)
  })
  afterAll(async () => partner.store.close())

  it('refuses calls without or with wrong Basic credentials with 401, and logs each request', async () => {
    for (const headers of [{} as Record<string, string>, {authorization: basicAuth('medpanel', 'wrong')}, {authorization: 'Bearer x'}]) {
      const res = await partner.app.request('/v1/projects/P%201', {headers})
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /)
    }
    expect(partner.logs.at(-1)).toMatch(/GET \/v1\/projects\/P( |%20)1 401/)
  })

  it('keeps what the last PUT/POST left, under both quota path spellings', async () => {
    expect((await partner.app.request('/v1/projects/P%201', {headers: AUTH})).status).toBe(404)
    expect((await partner.app.request('/v1/projects/P%201/quotas/Q1', json('PUT', quota))).status).toBe(404)
    expect((await partner.app.request('/v1/projects/P%201', json('PUT', project))).status).toBe(200)
    expect(await (await partner.app.request('/v1/projects/P%201', {headers: AUTH})).json()).toEqual(project)
    expect((await partner.app.request('/v1/projects/P%201/quotas/Q1', json('PUT', quota))).status).toBe(200)
    expect(await (await partner.app.request('/v1/projects/P%201/quota/Q1', {headers: AUTH})).json()).toEqual(quota)
    expect(await (await partner.app.request('/v1/projects/P%201/quotas', {headers: AUTH})).json()).toEqual([quota])
    await partner.app.request('/v1/projects/P%201/quotas/Q1/members', json('PUT', [member(0), member(1)]))
    await partner.app.request('/v1/projects/P%201/quota/Q1/members', json('POST', [member(2)]))
    expect(await (await partner.app.request('/v1/projects/P%201/quotas/Q1/members', {headers: AUTH})).json()).toEqual([member(0), member(1), member(2)])
    expect((await partner.app.request(`/v1/projects/P%201/quota/Q1/members/${NPI[1]}`, {method: 'DELETE', headers: AUTH})).status).toBe(200)
    expect((await partner.app.request(`/v1/projects/P%201/quotas/Q1/members/${NPI[1]}`, {headers: AUTH})).status).toBe(404)
    expect(await (await partner.app.request(`/v1/projects/P%201/quota/Q1/members/${NPI[2]}`, {headers: AUTH})).json()).toEqual(member(2))
    await partner.app.request('/v1/projects/P%201/quotas/Q1/members', json('PUT', [member(5)]))
    expect(await (await partner.app.request('/v1/projects/P%201/quotas/Q1/members', {headers: AUTH})).json()).toEqual([member(5)])
  })

  it('validates bodies with the spec schemas and answers {message}', async () => {
    const bad = await partner.app.request('/v1/projects/P%201/quotas/Q1', json('PUT', {...quota, matching_regions: ['XX']}))
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({message: expect.stringMatching(/^matching_regions\[0\]: /)})
    const mismatch = await partner.app.request('/v1/projects/other', json('PUT', project))
    expect((await mismatch.json()) as object).toEqual({message: 'project_id: body says "P 1" but the path says "other"'})
    const event = await partner.app.request('/v1/projects/P%201/events', json('POST', {npi: NPI[0], project_id: 'P 1', state: 'complete', event_at: '2026-01-02T00:00:00Z'}))
    expect(await event.json()).toEqual({message: 'quota_id: is required for a complete event'})
    const notJson = await partner.app.request('/v1/projects/P%201', {method: 'PUT', body: '{', headers: {...AUTH, 'content-type': 'application/json'}})
    expect(notJson.status).toBe(400)
  })

  it('applies a resent delivery (same X-Medpanel-Delivery) only once', async () => {
    const headers = {'x-medpanel-delivery': 'dup-1'}
    const event = {npi: NPI[0], project_id: 'P 1', state: 'start', event_at: '2026-01-02T00:00:00Z'}
    expect((await partner.app.request('/v1/projects/P%201/events', json('POST', event, headers))).status).toBe(200)
    expect((await partner.app.request('/v1/projects/P%201/events', json('POST', event, headers))).status).toBe(200)
    const events = (await (await partner.app.request('/v1/projects/P%201/events', {headers: AUTH})).json()) as unknown[]
    expect(events).toEqual([event])
  })
})

describe('verify-partner', () => {
  let partner: Awaited<ReturnType<typeof referencePartner>>
  const servers: RunningServer[] = []
  let good: string
  let noAuth: string
  let dropsAppends: string

  beforeAll(async () => {
    partner = await referencePartner(new ManualClock())
    good = (await startServer(partner.app, {port: 0, host: '127.0.0.1'})).url
    // Deliberately broken partners: one lets anyone in, one acknowledges POST appends without keeping them.
    const open = new Hono()
    open.all('*', (c) => {
      const headers = new Headers(c.req.raw.headers)
      headers.set('authorization', AUTH.authorization)
      return partner.app.fetch(new Request(c.req.raw, {headers}))
    })
    const dropping = new Hono()
    dropping.all('*', (c) => (c.req.method === 'POST' && c.req.path.endsWith('/members') ? c.json({ok: true}) : partner.app.fetch(c.req.raw)))
    servers.push(
      ...(await Promise.all([
        startServer(partner.app, {port: 0, host: '127.0.0.1'}),
        startServer(open, {port: 0, host: '127.0.0.1'}),
        startServer(dropping, {port: 0, host: '127.0.0.1'}),
      ])),
    )
    ;[good, noAuth, dropsAppends] = servers.map((s) => s.url) as [string, string, string]
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close(100)))
    await partner.store.close()
  })

  it('passes every check against the reference partner, with ids of its own', async () => {
    const report = await verifyPartner({url: good, username: 'medpanel', password: 'pw-0'})
    expect(report.checks.filter((c) => !c.ok)).toEqual([])
    expect(report.ok).toBe(true)
    expect(report.project_id).toMatch(/^medpanel-verify-/)
    expect(report.checks.length).toBeGreaterThanOrEqual(35)
  })

  it('fails the credential checks against a partner that skips auth', async () => {
    const report = await verifyPartner({url: noAuth, username: 'medpanel', password: 'pw-0'})
    expect(report.ok).toBe(false)
    const failing = report.checks.filter((c) => !c.ok).map((c) => c.name)
    expect(failing).toContain('401 without credentials: GET project')
    expect(failing).toContain('401 with wrong credentials: POST events')
    expect(failing).not.toContain('project GET returns the PUT')
  })

  it('stops at once, naming the failing check, when the partner cannot be reached; refuses a URL that is not http(s)', async () => {
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const report = await verifyPartner({url: `http://127.0.0.1:${port}`, username: 'medpanel', password: 'pw-0'})
    expect(report).toMatchObject({ok: false, passed: 0, failed: 1})
    expect(report.checks).toEqual([{name: 'project PUT accepted', ok: false, detail: 'request failed: ECONNREFUSED'}])
    await expect(verifyPartner({url: 'partner.example.com', username: 'u', password: 'p'})).rejects.toThrow(/^url: .* is not an http\(s\) URL/)
  })

  it('exits 1 from the CLI, naming the check, against a partner that drops POST appends', async () => {
    const result = await cliAsync(['verify-partner', '--url', dropsAppends, '--username', 'medpanel', '--password', 'pw-0'])
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/^Error: \d+ checks? failed: .*members POST appends/m)
    expect(result.stdout).toMatch(/FAIL\s+members POST appends/)
    const wrongPassword = await cliAsync(['verify-partner', '--url', good, '--username', 'medpanel', '--password', 'nope', '--json'])
    expect(wrongPassword.status).toBe(1)
    const report = JSON.parse(wrongPassword.stdout) as {ok: boolean; failed: number}
    expect(report.ok).toBe(false)
  })
})
