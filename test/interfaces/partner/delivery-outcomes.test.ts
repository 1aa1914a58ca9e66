import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {listDeliveries, nextAttemptDelay} from '../../../src/interfaces/partner/outbox.js'
import {pushMembers, pushProject, pushQuota, removeMember} from '../../../src/interfaces/partner/service.js'
import {type PartnerRequest, type PartnerResponse, RefusedTarget} from '../../../src/http/outbound.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {ManualClock} from '../../../src/lib/clock.js'
import type {Metrics} from '../../../src/metrics/metrics.js'
import {partnerMetrics} from '../../../src/interfaces/partner/metrics.js'
import {updateClient} from '../../../src/registry/service.js'
import type {Store} from '../../../src/store/db.js'
import {MEDPANEL_VERSION} from '../../../src/version.js'
import {FakeTransport, members, NPI, partnerStore, projectInput, quotaInput} from './helpers.js'

/**
 * What the worker records after each attempt, as an operator sees it in list-deliveries, the log
 * and /metrics: which answers count as delivered, the error text kept, when it gives up, and the
 * request the partner gets.
 */

/** Answers each request from a script: a status and body, or a thrown error. */
class ScriptedTransport {
  readonly requests: PartnerRequest[] = []
  constructor(private readonly answer: (request: PartnerRequest, index: number) => PartnerResponse | Error) {}
  async send(request: PartnerRequest): Promise<PartnerResponse> {
    this.requests.push(request)
    const outcome = this.answer(request, this.requests.length - 1)
    if (outcome instanceof Error) throw outcome
    return outcome
  }
}

describe('what an attempt leaves behind', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']
  let clientIds: string[]

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db, clientIds} = await partnerStore(clock, 1))
  })
  afterEach(async () => store.close())

  const only = async () => (await listDeliveries(db, {}))[0]!

  it('counts 200 to 299 as delivered and 199 or 300 as a failed attempt, keeping the status', async () => {
    for (const [status, outcome] of [
      [199, 'pending'],
      [200, 'delivered'],
      [299, 'delivered'],
      [300, 'pending'],
    ] as const) {
      await pushProject(db, projectInput({project_id: `S${status}`}), {}, clock.now())
      const transport = new ScriptedTransport(() => ({status, body: ''}))
      await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain()
      const row = (await listDeliveries(db, {projectId: `S${status}`}))[0]!
      expect(row, String(status)).toMatchObject({status: outcome, attempts: 1, last_status: status})
      expect(row.last_error, String(status)).toBe(outcome === 'delivered' ? null : `HTTP ${status}`)
    }
  })

  it('a delivery that finally goes is marked delivered at that time, its last error cleared', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    const answers = [503, 200]
    const transport = new ScriptedTransport((_r, i) => ({status: answers[i]!, body: 'busy'}))
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport})
    await w.drain()
    expect(await only()).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status: 503,
      last_error: 'HTTP 503: busy',
      delivered_at: null,
      next_attempt_at: '2026-01-15T12:00:05.000Z',
    })
    clock.advance(7)
    await w.drain()
    expect(await only()).toMatchObject({status: 'delivered', attempts: 2, last_status: 200, last_error: null, delivered_at: '2026-01-15T12:00:07.000Z', next_attempt_at: null})
  })

  it("keeps the start of a partner's error text on one line, escaped, at most 200 characters", async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    const body = `line one\r\n\tline\u001b[2J two   ${'x'.repeat(300)}`
    await new DeliveryWorker({db, keys: store.keys, clock, transport: new ScriptedTransport(() => ({status: 500, body}))}).drain()
    const error = (await only()).last_error!
    const kept = 'line one line\\u001b[2J two x'
    expect(error).toBe(`HTTP 500: ${kept}${'x'.repeat(200 - 'line one line\u001b[2J two x'.length)}`)
  })

  it('says why a request never got an answer: refused target, network error, timeout in seconds', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    const errors = [
      new RefusedTarget('refused: partner.test resolves to 169.254.169.254, link-local; nothing was sent'),
      Object.assign(new Error('fetch failed'), {cause: {code: 'ECONNRESET'}}),
      Object.assign(new Error('aborted'), {name: 'TimeoutError'}),
    ]
    const transport = new ScriptedTransport((_r, i) => errors[i]!)
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport, timeoutMs: 2_500})
    const seen: string[] = []
    for (const wait of [0, 5, 30]) {
      clock.advance(wait)
      await w.drain()
      seen.push((await only()).last_error!)
    }
    expect(seen).toEqual(['refused: partner.test resolves to 169.254.169.254, link-local; nothing was sent', 'network error: ECONNRESET', 'network error: timed out after 2.5 s'])
    expect((await only()).last_status).toBeNull()
  })

  it('fails at once, sending nothing, when the partner client lost its grant, URL, user name or password', async () => {
    const id = clientIds[0]!
    const fine = {
      grants: '["partner"]',
      partner_url: 'http://partner.test',
      partner_username: 'medpanel',
      partner_password: (await db.selectFrom('clients').select('partner_password').executeTakeFirstOrThrow()).partner_password,
    }
    // update-client refuses a partner client without these; a store edited by hand or written by
    // an earlier release may still lack one.
    const changes = [{grants: '["balance"]'}, {partner_url: null}, {partner_username: null}, {partner_password: null}, {partner_username: ''}]
    for (const [i, change] of changes.entries()) {
      await db
        .updateTable('clients')
        .set(fine as never)
        .where('id', '=', id)
        .execute()
      await pushProject(db, projectInput({project_id: `G${i}`}), {partners: [id]}, clock.now())
      await db
        .updateTable('clients')
        .set(change as never)
        .where('id', '=', id)
        .execute()
      const transport = new FakeTransport()
      expect(await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain(), JSON.stringify(change)).toEqual({attempted: 1, delivered: 0, failedAttempts: 1})
      expect(transport.requests, JSON.stringify(change)).toHaveLength(0)
      const row = (await listDeliveries(db, {projectId: `G${i}`}))[0]!
      expect(row, JSON.stringify(change)).toMatchObject({status: 'failed', attempts: 1, last_status: null})
      expect(row.last_error).toBe(`partner client ${id} is gone, expired or has no partner URL and credentials`)
    }
  })

  it('sends the headers a partner relies on, no body for a DELETE, and one slash between URL and path', async () => {
    // update-client trims a trailing slash; a URL stored by an earlier release may still have some.
    await db.updateTable('clients').set({partner_url: 'http://partner.test/base//', signing_secret: null}).where('id', '=', clientIds[0]!).execute()
    await pushProject(db, projectInput(), {}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(2)}, clock.now())
    await removeMember(db, 'P1', 'Q1', NPI[0]!, clock.now())
    const transport = new FakeTransport()
    await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain()
    const urls = transport.requests.map((r) => `${r.method} ${r.url}`)
    expect(urls).toEqual([
      'PUT http://partner.test/base/v1/projects/P1',
      'PUT http://partner.test/base/v1/projects/P1/quotas/Q1',
      'PUT http://partner.test/base/v1/projects/P1/quotas/Q1/members',
      `DELETE http://partner.test/base/v1/projects/P1/quota/Q1/members/${NPI[0]}`,
    ])
    const [put, , , del] = transport.requests
    expect(put!.headers).toMatchObject({accept: 'application/json', 'content-type': 'application/json', 'user-agent': `medpanel-delivery/${MEDPANEL_VERSION}`})
    expect(put!.headers).not.toHaveProperty('x-medpanel-signature')
    expect(JSON.parse(put!.body!)).toMatchObject({project_id: 'P1'})
    expect(del!.body).toBeUndefined()
  })

  it('signs with the whole seconds of the clock at the time of sending', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    clock.advance(1.999)
    const transport = new FakeTransport()
    await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain()
    expect(transport.requests[0]!.headers['x-medpanel-signature']).toMatch(new RegExp(`^t=${Date.parse('2026-01-15T12:00:01Z') / 1000},v1=[0-9a-f]{64}$`))
  })

  it('logs a delivery as info, a retry as warn and giving up as error, and tells the caller of each attempt', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    await pushProject(db, projectInput({project_id: 'P2'}), {}, clock.now())
    const lines: {level: string; outcome: string; attempt: number}[] = []
    const attempts: [string, boolean][] = []
    const transport = new FakeTransport((r) => (r.url.endsWith('/P1') ? 200 : 503))
    const w = new DeliveryWorker({
      db,
      keys: store.keys,
      clock,
      transport,
      logFormat: 'json',
      log: (line) => lines.push(JSON.parse(line)),
      onAttempt: (row, ok) => attempts.push([row.project_id, ok]),
    })
    await w.drain()
    // P2 fails until it is given up, 3 days on: its 18th attempt.
    for (let i = 0; i < 17; i++) {
      const [row] = await listDeliveries(db, {projectId: 'P2'})
      clock.advance((Date.parse(row!.next_attempt_at!) - clock.now().getTime()) / 1000)
      await w.drain()
    }
    expect((await listDeliveries(db, {projectId: 'P2'}))[0]).toMatchObject({status: 'failed', attempts: 18})
    expect(lines.map(({level, outcome, attempt}) => ({level, outcome, attempt}))).toEqual([
      {level: 'info', outcome: 'delivered', attempt: 1},
      ...Array.from({length: 17}, (_, i) => ({level: 'warn', outcome: 'pending', attempt: i + 1})),
      {level: 'error', outcome: 'failed', attempt: 18},
    ])
    expect(attempts).toEqual([['P1', true], ...Array(18).fill(['P2', false])])
  })

  it('counts each attempt by outcome for /metrics, and a retry only when one is scheduled', async () => {
    const counted: string[] = []
    const counter = (name: string) => ({inc: () => counted.push(name)})
    const partner = {
      attempts: {delivered: counter('delivered'), failed: counter('failed'), network_error: counter('network_error'), undeliverable: counter('undeliverable')},
      retriesScheduled: counter('retry'),
    }
    const metrics = {of: (set: unknown) => (set === partnerMetrics ? partner : {})}
    await pushProject(db, projectInput(), {}, clock.now())
    const answers: (number | Error)[] = [500, Object.assign(new Error('fetch failed'), {cause: {code: 'ECONNREFUSED'}}), 200]
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport: new FakeTransport((_r, i) => answers[i]!), metrics: metrics as unknown as Metrics})
    for (const wait of [0, 5, 30]) {
      clock.advance(wait)
      await w.drain()
    }
    // A retry is counted as the attempt is recorded, before the attempt itself.
    expect(counted).toEqual(['retry', 'failed', 'retry', 'network_error', 'delivered'])
    counted.length = 0
    await pushProject(db, projectInput({project_id: 'P2'}), {}, clock.now())
    await updateClient(store, clientIds[0]!, {expire: true}, clock.now())
    await w.drain()
    expect(counted).toEqual(['undeliverable'])
  })

  it('sends up to eight projects side by side unless told otherwise, each project one at a time', async () => {
    for (let i = 0; i < 10; i++) {
      await pushProject(db, projectInput({project_id: `P${i}`}), {}, clock.now())
      await pushQuota(db, `P${i}`, quotaInput(), clock.now())
    }
    for (const [concurrency, expected] of [
      [undefined, 8],
      [3, 3],
    ] as const) {
      let inFlight = 0
      let most = 0
      const transport = {
        send: async () => {
          inFlight++
          most = Math.max(most, inFlight)
          await new Promise((resolve) => setImmediate(resolve))
          inFlight--
          return {status: 503, body: ''}
        },
      }
      await new DeliveryWorker({db, keys: store.keys, clock, transport, concurrency}).drain()
      expect(most, `concurrency ${concurrency}`).toBe(expected)
      clock.advance(30)
    }
  })
})

describe('the retry schedule at its ends', () => {
  const first = new Date('2026-01-15T12:00:00.000Z')
  const at = (seconds: number) => new Date(first.getTime() + seconds * 1000)

  it('waits 5 s after the first failure and 3 h after the sixth, then 6 h', () => {
    expect(nextAttemptDelay(1, first, first)).toBe(5)
    expect(nextAttemptDelay(6, first, at(1000))).toBe(10_800)
    expect(nextAttemptDelay(7, first, at(20_000))).toBe(21_600)
  })

  it('still tries an attempt due exactly 3 days after the first, and gives up on one due a moment later', () => {
    const lastChance = 3 * 86400 - 21_600
    expect(nextAttemptDelay(12, first, at(lastChance))).toBe(21_600)
    expect(nextAttemptDelay(12, first, at(lastChance + 0.001))).toBeNull()
  })
})
