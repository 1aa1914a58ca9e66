import {createHmac} from 'node:crypto'
import {Hono} from 'hono'
import type {HttpEnv} from '../../../src/http/env.js'
import {Webhook} from 'standardwebhooks'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {listDeliveries} from '../../../src/interfaces/partner/outbox.js'
import {openReceiverStore, type ReceiverStore} from '../../../src/interfaces/partner/receiver/store.js'
import {receiverApp} from '../../../src/interfaces/partner/receiver/routes.js'
import {pushEvent, pushMembers, pushProject, pushQuota, removeMember} from '../../../src/interfaces/partner/service.js'
import {verifyPartner} from '../../../src/interfaces/partner/verify.js'
import type {PartnerRequest} from '../../../src/http/outbound.js'
import {ManualClock} from '../../../src/lib/clock.js'
import type {Store} from '../../../src/store/db.js'
import {basicAuth} from '../../helpers/http-basic.js'
import {appTransport, FakeTransport, members, NPI, PARTNER_URL, partnerStore, projectInput, quotaInput, worker} from './helpers.js'

/*
 * Pushes signed the Standard Webhooks way, checked by the npm `standardwebhooks` library as a
 * partner would use it: given the client's signing secret ('signing-secret-0123456789', see
 * helpers.ts) as whsec_ + base64 of its UTF-8 bytes. The library checks the time against the
 * real clock, so these stores' clocks start at the real time.
 */
const WHSEC = 'whsec_c2lnbmluZy1zZWNyZXQtMDEyMzQ1Njc4OQ=='
const KEY = Buffer.from('signing-secret-0123456789')
const AUTH = basicAuth('medpanel', 'pw-0')

const seconds = (clock: ManualClock) => Math.floor(clock.now().getTime() / 1000)
const verify = (request: PartnerRequest, secret = WHSEC) => new Webhook(secret).verify(request.body ?? '', request.headers, {jsonParse: false})

describe('Standard Webhooks signatures on pushes', () => {
  let clock: ManualClock
  let store: Store
  /** The one partner with a signing secret: the pushes of the tests below go to it alone. */
  let signing: {partners: string[]}

  beforeEach(async () => {
    clock = new ManualClock(new Date())
    let clientIds: string[]
    ;({store, clientIds} = await partnerStore(clock, 2))
    signing = {partners: [clientIds[0]!]}
  })
  afterEach(async () => store.close())

  it('every push to a signing client verifies with the standardwebhooks library, webhook-id being the delivery id; a client without a secret gets none', async () => {
    const {db} = store
    await pushProject(db, projectInput(), {}, clock.now())
    await pushQuota(db, 'P1', quotaInput({closes_at: '2030-01-01T00:00:00Z'}), clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(3), chunk: 2}, clock.now())
    await removeMember(db, 'P1', 'Q1', NPI[1]!, clock.now())
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[0]!, state: 'start'}, clock.now())
    const transport = new FakeTransport()
    await worker(store, clock, transport).drain()

    const signed = transport.requests.filter((r) => r.url.startsWith(`${PARTNER_URL}/`))
    expect(signed.map((r) => r.method).sort()).toEqual(['DELETE', 'POST', 'POST', 'PUT', 'PUT', 'PUT'])
    const ids = new Set((await listDeliveries(db, {})).map((d) => d.id))
    for (const request of signed) {
      expect(() => verify(request), `${request.method} ${request.url}`).not.toThrow()
      expect(request.headers['webhook-id']).toBe(request.headers['x-medpanel-delivery'])
      expect(ids.has(request.headers['webhook-id']!)).toBe(true)
      expect(request.headers['webhook-timestamp']).toBe(String(seconds(clock)))
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    }
    const unsigned = transport.requests.filter((r) => !r.url.startsWith(`${PARTNER_URL}/`))
    expect(unsigned).toHaveLength(signed.length)
    for (const request of unsigned) expect(Object.keys(request.headers).filter((h) => h.startsWith('webhook-'))).toEqual([])
  })

  it('a retry keeps its webhook-id and is signed again at the time it is sent', async () => {
    await pushProject(store.db, projectInput(), signing, clock.now())
    const transport = new FakeTransport((_, index) => (index === 0 ? 503 : 200))
    await worker(store, clock, transport).drain()
    const sentAt = seconds(clock)
    clock.advance(6)
    await worker(store, clock, transport).drain()
    const [first, retry] = transport.requests
    expect(retry, 'the retry was sent').toBeDefined()
    expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id'])
    expect([first!.headers['webhook-timestamp'], retry!.headers['webhook-timestamp']]).toEqual([String(sentAt), String(sentAt + 6)])
    expect(retry!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature'])
    expect(() => verify(retry!)).not.toThrow()
  })

  it('the library refuses a push whose body, timestamp, id or secret is not the one signed, or that was signed 10 minutes ago', async () => {
    await pushProject(store.db, projectInput(), signing, clock.now())
    const transport = new FakeTransport()
    await worker(store, clock, transport).drain()
    const [sent] = transport.requests
    expect(() => verify(sent!)).not.toThrow()
    const tampered = {...sent!, body: sent!.body!.replace('Cardiology attitudes', 'Cardiology attitudez')}
    expect(() => verify(tampered)).toThrow(/No matching signature/)
    const later = {...sent!, headers: {...sent!.headers, 'webhook-timestamp': String(seconds(clock) + 1)}}
    expect(() => verify(later)).toThrow(/No matching signature/)
    const otherId = {...sent!, headers: {...sent!.headers, 'webhook-id': 'another-id'}}
    expect(() => verify(otherId)).toThrow(/No matching signature/)
    expect(() => verify(sent!, `whsec_${Buffer.from('another-signing-secret').toString('base64')}`)).toThrow(/No matching signature/)

    const past = new ManualClock(new Date(Date.now() - 600_000))
    await pushProject(store.db, projectInput({name: 'Sent long ago'}), signing, past.now())
    await worker(store, past, transport).drain()
    const old = transport.requests.at(-1)!
    expect(old.body).toContain('Sent long ago')
    expect(() => verify(old)).toThrow(/timestamp too old/)
  })
})

describe('the reference partner with a signing key (partner-serve --signing-secret)', () => {
  let clock: ManualClock
  let partner: ReceiverStore
  let app: Hono<HttpEnv>
  const project = {project_id: 'P1', name: 'Signed', duration: 10, status: 'active', project_type: 'custom', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z'}

  /** A PUT of `body`, its Standard Webhooks headers made by the library at `at` (seconds) over `signed`. */
  const put = (body: string, options: {signed?: string; at?: number; id?: string; headers?: Record<string, string>} = {}) => {
    const at = options.at ?? seconds(clock)
    const id = options.id ?? `msg-${Math.random()}`
    const headers: Record<string, string> = {
      authorization: AUTH,
      'content-type': 'application/json',
      'x-medpanel-delivery': id,
      'webhook-id': id,
      'webhook-timestamp': String(at),
      'webhook-signature': new Webhook(WHSEC).sign(id, new Date(at * 1000), options.signed ?? body),
      ...options.headers,
    }
    return app.request('/v1/projects/P1', {method: 'PUT', body, headers})
  }
  const stored = async () => (await app.request('/v1/projects/P1', {headers: {authorization: AUTH}})).status

  beforeEach(async () => {
    clock = new ManualClock()
    partner = await openReceiverStore(':memory:')
    app = receiverApp({db: partner.db, username: 'medpanel', password: 'pw-0', clock, log: () => {}, signingKey: KEY})
  })
  afterEach(async () => partner.close())

  it('takes a write signed with the key, also when one of several signatures holds, and reads unsigned', async () => {
    const body = JSON.stringify(project)
    const id = 'msg-several'
    const at = seconds(clock)
    const other = new Webhook(`whsec_${Buffer.from('the-previous-secret-000').toString('base64')}`).sign(id, new Date(at * 1000), body)
    const right = new Webhook(WHSEC).sign(id, new Date(at * 1000), body)
    expect((await put(body, {id, headers: {'webhook-signature': `${other} ${right}`}})).status).toBe(200)
    expect(await stored()).toBe(200)
  })

  it('refuses with 400, applying nothing, a write with a tampered body, a stale or changed timestamp, no signature, or a wrong X-Medpanel-Signature', async () => {
    const body = JSON.stringify(project)
    const now = seconds(clock)
    const legacy = (t: number, text: string, key: Uint8Array = KEY) => `t=${t},v1=${createHmac('sha256', key).update(`${t}.${text}`).digest('hex')}`
    const refusals: [() => Response | Promise<Response>, RegExp][] = [
      [() => put(body, {signed: body.replace('Signed', 'signed')}), /^webhook-signature: no v1 signature matches/],
      [() => put(body, {at: now - 301}), /^webhook-timestamp: 301 s old; more than 300 s either way is refused$/],
      [() => put(body, {at: now + 301}), /^webhook-timestamp: 301 s ahead/],
      [() => put(body, {headers: {'webhook-timestamp': String(now + 1)}}), /^webhook-signature: no v1 signature matches/],
      [() => put(body, {headers: {'webhook-signature': ''}}), /^webhook-signature: a signed push carries webhook-id, webhook-timestamp and webhook-signature$/],
      [() => put(body, {headers: {'x-medpanel-signature': legacy(now, body, Buffer.from('another-signing-secret'))}}), /^x-medpanel-signature: does not match/],
      [() => put(body, {headers: {'x-medpanel-signature': legacy(now - 400, body)}}), /^x-medpanel-signature: 400 s old/],
    ]
    for (const [send, message] of refusals) {
      const res = await send()
      expect(res.status, String(message)).toBe(400)
      expect(((await res.json()) as {message: string}).message).toMatch(message)
    }
    expect(await stored()).toBe(404)
    // The same push with both signatures right goes through.
    expect((await put(body, {headers: {'x-medpanel-signature': legacy(now, body)}})).status).toBe(200)
  })

  it("takes every push medpanel's worker sends a signing client, DELETE included", async () => {
    const clock = new ManualClock(new Date())
    const {store} = await partnerStore(clock, 1)
    try {
      const receiving = receiverApp({db: partner.db, username: 'medpanel', password: 'pw-0', clock, log: () => {}, signingKey: KEY})
      await pushProject(store.db, projectInput(), {}, clock.now())
      await pushQuota(store.db, 'P1', quotaInput({closes_at: '2030-01-01T00:00:00Z'}), clock.now())
      await pushMembers(store.db, {projectId: 'P1', quotaId: 'Q1', members: members(2)}, clock.now())
      await removeMember(store.db, 'P1', 'Q1', NPI[0]!, clock.now())
      expect(await worker(store, clock, appTransport(receiving)).drain()).toEqual({attempted: 4, delivered: 4, failedAttempts: 0})
    } finally {
      await store.close()
    }
  })
})

describe('verify-partner --signing-secret', () => {
  const clock = new ManualClock(new Date())
  let partner: ReceiverStore
  beforeEach(async () => {
    partner = await openReceiverStore(':memory:')
  })
  afterEach(async () => partner.close())
  const run = (app: Hono<any>) =>
    verifyPartner({url: 'http://partner.test', username: 'medpanel', password: 'pw-0', signingSecret: 'signing-secret-0123456789', transport: appTransport(app)})
  const signatureChecks = [
    '4xx for a push with no webhook-signature',
    '4xx for a push with webhook-signature made with another secret',
    '4xx for a push with webhook-signature of another body',
    '4xx for a push with webhook-timestamp not the one signed',
    '4xx for a push with webhook-timestamp 600 s old',
    'project unchanged by pushes with bad signatures',
  ]

  it('passes every check, those of signatures included, against the reference partner holding the key', async () => {
    const report = await run(receiverApp({db: partner.db, username: 'medpanel', password: 'pw-0', clock, log: () => {}, signingKey: KEY}))
    expect(report.checks.filter((c) => !c.ok)).toEqual([])
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining([...signatureChecks, 'push accepted when one of several webhook-signature values holds']))
  })

  it('fails the signature checks against a partner that checks none, or only X-Medpanel-Signature', async () => {
    const open = receiverApp({db: partner.db, username: 'medpanel', password: 'pw-0', clock, log: () => {}})
    const unchecked = await run(open)
    expect(unchecked.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(signatureChecks)

    // A partner that checks medpanel's own header and ignores the Standard Webhooks ones.
    const legacyOnly = new Hono()
    legacyOnly.all('*', async (c) => {
      const body = await c.req.text()
      const given = /^t=(\d+),v1=([0-9a-f]+)$/.exec(c.req.header('x-medpanel-signature') ?? '')
      const holds = given !== null && createHmac('sha256', KEY).update(`${given[1]}.${body}`).digest('hex') === given[2]
      if (c.req.method !== 'GET' && !holds) return c.json({message: 'bad signature'}, 400)
      return open.request(c.req.url, {method: c.req.method, headers: c.req.raw.headers, ...(body ? {body} : {})})
    })
    const report = await run(legacyOnly)
    expect(report.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(signatureChecks)
  })
})
