import {createHmac} from 'node:crypto'
import {hostname} from 'node:os'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {listDeliveries, retryDeliveries} from '../../../src/interfaces/partner/outbox.js'
import {closeProject, getMembers, getProject, pushEvent, pushMembers, pushProject, pushQuota, removeMember} from '../../../src/interfaces/partner/service.js'
import * as repo from '../../../src/interfaces/partner/repository.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {iso, ManualClock} from '../../../src/lib/clock.js'
import {updateClient} from '../../../src/registry/service.js'
import type {Store} from '../../../src/store/db.js'
import {appTransport, FakeTransport, members, NPI, PARTNER_URL, partnerStore, projectInput, quotaInput, referencePartner, worker} from './helpers.js'
import {basicAuth} from '../../helpers/http-basic.js'

/** Resolves once `condition` holds, looking again every event-loop turn (setImmediate, never faked here); fails after 5 s. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within 5 s: ${condition}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe('delivery worker', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']
  let clientIds: string[]

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db, clientIds} = await partnerStore(clock, 2))
  })
  afterEach(async () => store.close())

  it('sends Basic auth, JSON, a delivery id and a verifiable signature to the partner URL', async () => {
    const transport = new FakeTransport()
    await pushProject(db, projectInput(), {}, clock.now())
    const result = await worker(store, clock, transport).drain()
    expect(result).toEqual({attempted: 2, delivered: 2, failedAttempts: 0})
    const [first, second] = transport.requests
    expect(first!.url).toBe(`${PARTNER_URL}/v1/projects/P1`)
    expect(second!.url).toBe('http://partner2.test/base/v1/projects/P1')
    expect(first!.method).toBe('PUT')
    expect(first!.headers.authorization).toBe(basicAuth('medpanel', 'pw-0'))
    expect(first!.headers['content-type']).toBe('application/json')
    const ids = (await listDeliveries(db, {})).map((d) => d.id)
    expect(first!.headers['x-medpanel-delivery']).toBe(ids[0])
    const sig = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(first!.headers['x-medpanel-signature']!)
    expect(sig).not.toBeNull()
    expect(Number(sig![1])).toBe(Date.parse('2026-01-15T12:00:00Z') / 1000)
    expect(sig![2]).toBe(createHmac('sha256', 'signing-secret-0123456789').update(`${sig![1]}.${first!.body}`).digest('hex'))
    expect(second!.headers['x-medpanel-signature']).toBeUndefined()
    expect((await listDeliveries(db, {})).every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true)
  })

  it('sends the id of the run or request that queued a delivery as X-Request-Id, and logs it with each attempt in either format', async () => {
    const transport = new FakeTransport()
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now(), 'push-run-1')
    expect((await listDeliveries(db, {}))[0]!.request_id).toBe('push-run-1')
    const text: string[] = []
    await new DeliveryWorker({db, keys: store.keys, clock, transport, log: (line) => text.push(line)}).drain()
    expect(transport.requests[0]!.headers['x-request-id']).toBe('push-run-1')
    expect(text).toEqual([expect.stringMatching(/^delivery [0-9a-f-]{36} PUT \/v1\/projects\/P1 -> delivered \(200\) id=push-run-1$/)])

    // A row queued without an id (as every row of an earlier release) goes without the header.
    transport.setAnswer(() => 503)
    await pushProject(db, projectInput({name: 'Renamed'}), {}, clock.now())
    const json: string[] = []
    await new DeliveryWorker({db, keys: store.keys, clock, transport, log: (line) => json.push(line), logFormat: 'json'}).drain()
    expect(transport.requests[1]!.headers).not.toHaveProperty('x-request-id')
    const [row] = (await listDeliveries(db, {})).slice(-1)
    expect(json.map((line) => JSON.parse(line))).toEqual([
      {
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
        level: 'warn',
        msg: 'delivery attempt',
        interface: 'B',
        delivery_id: row!.id,
        request_id: null,
        client_id: clientIds[0],
        method: 'PUT',
        path: '/v1/projects/P1',
        attempt: 1,
        outcome: 'pending',
        status: 503,
        error: 'HTTP 503: nope',
      },
    ])
  })

  it('retries on the 5 s, 30 s, 2 min, 10 min, 1 h, 3 h, then 6-hourly schedule and gives up after 3 days', async () => {
    const transport = new FakeTransport(() => 503)
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    const w = worker(store, clock, transport)
    const start = clock.now().getTime()
    await w.drain()
    const waits: number[] = []
    for (let i = 0; i < 40; i++) {
      const [row] = await listDeliveries(db, {})
      if (row!.status !== 'pending') break
      const wait = (Date.parse(row!.next_attempt_at!) - clock.now().getTime()) / 1000
      waits.push(wait)
      clock.advance(wait - 1)
      expect((await w.drain()).attempted).toBe(0)
      clock.advance(1)
      expect((await w.drain()).attempted).toBe(1)
    }
    // Written out, not read from config.ts: a changed schedule must fail here. 5 s + 30 s + 2 min +
    // 10 min + 1 h + 3 h = 15,155 s; then every 6 h while the next attempt is within 3 days
    // (259,200 s) of the first: eleven more, the last at 252,755 s.
    expect(waits).toEqual([5, 30, 120, 600, 3600, 10_800, ...Array(11).fill(21_600)])
    const [row] = await listDeliveries(db, {})
    expect(row!.status).toBe('failed')
    expect(row!.last_error).toBe('HTTP 503: nope')
    expect(row!.attempts).toBe(transport.requests.length)
    expect(row!.attempts).toBe(18)
    expect(clock.now().getTime() - start).toBeLessThanOrEqual(3 * 86400 * 1000)
    expect(new Set(transport.requests.map((r) => r.headers['x-medpanel-delivery'])).size).toBe(1)

    transport.setAnswer(() => 200)
    const retried = await retryDeliveries(db, {allFailed: true}, clock.now())
    expect(retried.requeued).toHaveLength(1)
    await w.drain()
    expect((await listDeliveries(db, {}))[0]).toMatchObject({status: 'delivered', attempts: 1})
  })

  it('keeps each project in order: a stuck head holds back its project but not others', async () => {
    const transport = new FakeTransport((r) => (r.url.includes('/P1') && r.method === 'PUT' && !r.url.includes('quotas') ? 500 : 200))
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    await pushProject(db, projectInput({project_id: 'P2'}), {partners: [clientIds[0]!]}, clock.now())
    const w = worker(store, clock, transport)
    await w.drain()
    expect(transport.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['PUT /v1/projects/P1', 'PUT /v1/projects/P2'])
    transport.setAnswer(() => 200)
    clock.advance(5)
    await w.drain()
    expect(transport.requests.slice(2).map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['PUT /v1/projects/P1', 'PUT /v1/projects/P1/quotas/Q1'])
  })

  it('records network errors and timeouts as failed attempts', async () => {
    const transport = new FakeTransport(() => Object.assign(new Error('fetch failed'), {cause: {code: 'ECONNREFUSED'}}))
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await worker(store, clock, transport).drain()
    expect((await listDeliveries(db, {}))[0]).toMatchObject({status: 'pending', attempts: 1, last_error: 'network error: ECONNREFUSED'})
    transport.setAnswer(() => Object.assign(new Error('aborted'), {name: 'TimeoutError'}))
    clock.advance(5)
    await worker(store, clock, transport).drain()
    expect((await listDeliveries(db, {}))[0]!.last_error).toBe('network error: timed out after 10 s')
  })

  it('fails at once for a partner client that expired, and retry skips a failed PUT that a newer one replaced', async () => {
    const transport = new FakeTransport()
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await updateClient(store, clientIds[0]!, {expire: true}, clock.now())
    await worker(store, clock, transport).drain()
    expect(transport.requests).toHaveLength(0)
    const [failed] = await listDeliveries(db, {status: 'failed'})
    expect(failed!.last_error).toMatch(/expired/)
    await updateClient(store, clientIds[0]!, {expire: false}, clock.now())
    await pushProject(db, projectInput({name: 'newer'}), {}, clock.now())
    await worker(store, clock, transport).drain()
    const retried = await retryDeliveries(db, {ids: [failed!.id]}, clock.now())
    expect(retried).toEqual({requeued: [], superseded: [failed!.id]})
    await expect(retryDeliveries(db, {ids: [failed!.id]}, clock.now())).rejects.toThrow(/is superseded, not failed/)
  })

  it('a partner that answers 500 to its first requests still ends equal to medpanel, applied in order', async () => {
    const partner = await referencePartner(clock)
    let failures = 9
    const transport = appTransport(partner.app, () => (failures-- > 0 ? 500 : undefined))
    const p = [clientIds[0]!]
    await pushProject(db, projectInput(), {partners: p}, clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q1', limit: 2}), clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q2', limit: 10}), clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(7), chunk: 3}, clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q2', members: members(4, 20), chunk: 3}, clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q2', members: members(2, 30), append: true}, clock.now())
    await removeMember(db, 'P1', 'Q1', NPI[1]!, clock.now())
    await pushEvent(db, {project_id: 'P1', npi: NPI[0]!, state: 'start'}, clock.now())
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[0]!, state: 'complete'}, clock.now())
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[2]!, state: 'complete'}, clock.now())
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[3]!, state: 'start'}, clock.now())
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q2', npi: NPI[20]!, state: 'screenout'}, clock.now())
    await closeProject(db, 'P1', clock.now())

    const w = worker(store, clock, transport)
    for (let i = 0; i < 30; i++) {
      await w.drain()
      const waiting = await listDeliveries(db, {status: 'pending'})
      if (waiting.length === 0) break
      // Jump the clock to the next retry instead of sleeping.
      const later = waiting.map((d) => Date.parse(d.next_attempt_at!)).filter((t) => t > clock.now().getTime())
      clock.advance((Math.min(...later) - clock.now().getTime()) / 1000)
    }
    expect(await listDeliveries(db, {status: 'pending'})).toEqual([])
    expect(await listDeliveries(db, {status: 'failed'})).toEqual([])

    const get = async (path: string) => (await partner.app.request(path, {headers: {authorization: basicAuth('medpanel', 'pw-0')}})).json()
    const ours = await getProject(db, 'P1')
    expect(await get('/v1/projects/P1')).toEqual(ours.project)
    expect(ours.project.status).toBe('closed')
    for (const quota of ours.quotas) {
      const {completes: _c, members: _m, ...wire} = quota
      expect(await get(`/v1/projects/P1/quotas/${quota.quota_id}`)).toEqual(wire)
      expect(wire.status).toBe('closed')
      expect(await get(`/v1/projects/P1/quotas/${quota.quota_id}/members`)).toEqual(await getMembers(db, 'P1', quota.quota_id))
    }
    const events = (await get('/v1/projects/P1/events')) as {state: string}[]
    expect(events.map((e) => e.state)).toEqual(['start', 'complete', 'complete', 'quotafull', 'screenout'])

    // Successful requests reached the partner in the order they were queued.
    const delivered = (await listDeliveries(db, {status: 'delivered'})).map((d) => d.id)
    const okOrder: string[] = []
    const seen = new Set<string>()
    for (const r of transport.requests) {
      const id = r.headers['x-medpanel-delivery']!
      if (!seen.has(id) && delivered.includes(id)) okOrder.push(id)
      seen.add(id)
    }
    expect(okOrder).toEqual(delivered)
    await partner.store.close()
  })

  it('a --wait drain waits for another sender that holds its project, then sends the rest', async () => {
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    const [head] = await repo.listDeliveries(db, {})
    // Another live process (serve's worker) is sending P1's head: it holds that row's lease.
    await repo.lease(db, [head!.seq], `${hostname()}:${process.pid}:serve-worker`, iso(new Date(clock.now().getTime() + 60_000)))
    const transport = new FakeTransport()
    // Only setTimeout is faked: the drain's pause between looks can be seen (a pending timer) and
    // ended at will, while the store's writer (setImmediate) and Date run for real.
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      let settled = false
      const waiting = new DeliveryWorker({db, keys: store.keys, clock, transport}).drain({projectIds: ['P1'], now: true}).finally(() => (settled = true))
      // It found nothing to claim, saw the other sender, and paused to look again.
      await until(() => settled || vi.getTimerCount() > 0)
      expect(settled, 'the --wait drain returned while another process was sending its project').toBe(false)
      expect(transport.requests).toHaveLength(0)

      // The other process's send succeeds and is recorded, as its worker records it.
      const stamp = iso(clock.now())
      await repo.updateDelivery(db, head!.seq, {
        status: 'delivered',
        attempts: 1,
        first_attempt_at: stamp,
        last_status: 200,
        last_error: null,
        delivered_at: stamp,
        lease_owner: null,
        lease_until: null,
        updated_at: stamp,
      })
      await until(async () => {
        await vi.advanceTimersByTimeAsync(50)
        return settled
      })
      expect(await waiting).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    } finally {
      vi.useRealTimers()
    }
    expect(transport.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual(['PUT /v1/projects/P1/quotas/Q1'])
    expect((await listDeliveries(db, {})).map((d) => d.status)).toEqual(['delivered', 'delivered'])
  })

  it('runs in the background, picks up new rows, and stop() lets the send in flight finish', async () => {
    const transport = new FakeTransport()
    let sending = 0
    const slow = {
      send: async (r: Parameters<FakeTransport['send']>[0]) => {
        sending++
        await new Promise((res) => setTimeout(res, 150))
        return transport.send(r)
      },
    }
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport: slow})
    w.start(30)
    await pushProject(db, projectInput(), {partners: [clientIds[0]!]}, clock.now())
    for (let i = 0; i < 100 && sending === 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(sending).toBe(1)
    await w.stop()
    expect((await listDeliveries(db, {}))[0]).toMatchObject({status: 'delivered', attempts: 1})
  })

  it('two workers draining at once send each delivery exactly once (leases)', async () => {
    for (let i = 0; i < 6; i++) await pushProject(db, projectInput({project_id: `P${i}`}), {partners: [clientIds[0]!]}, clock.now())
    const transport = new FakeTransport()
    const slow = {
      send: async (r: Parameters<FakeTransport['send']>[0]) => {
        await new Promise((res) => setTimeout(res, 5))
        return transport.send(r)
      },
    }
    const a = new DeliveryWorker({db, keys: store.keys, clock, transport: slow, concurrency: 2})
    const b = new DeliveryWorker({db, keys: store.keys, clock, transport: slow, concurrency: 2})
    await Promise.all([a.drain(), b.drain()])
    const sent = transport.requests.map((r) => r.headers['x-medpanel-delivery'])
    expect(sent).toHaveLength(6)
    expect(new Set(sent).size).toBe(6)
  })
})
