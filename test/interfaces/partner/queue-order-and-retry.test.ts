import {hostname} from 'node:os'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {listDeliveries, retryDeliveries} from '../../../src/interfaces/partner/outbox.js'
import * as repo from '../../../src/interfaces/partner/repository.js'
import {pushEvent, pushMembers, pushProject, pushQuota, removeMember} from '../../../src/interfaces/partner/service.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {iso, ManualClock} from '../../../src/lib/clock.js'
import type {Store} from '../../../src/store/db.js'
import {FakeTransport, members, NPI, partnerStore, projectInput, quotaInput} from './helpers.js'

/**
 * Which queued requests a newer PUT of the same resource replaces (never one that a later row
 * needs, nor one being sent), and what retry-deliveries does with failed ones.
 */
describe('a newer PUT replacing queued ones', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db} = await partnerStore(clock, 1))
    await pushProject(db, projectInput(), {}, clock.now())
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q2'}), clock.now())
  })
  afterEach(async () => store.close())

  const pending = async () => (await listDeliveries(db, {status: 'pending'})).map((d) => `${d.method} ${d.path.replace('/v1/projects/P1', '')}`)
  const Q1 = (limit: number) => pushQuota(db, 'P1', quotaInput({limit}), clock.now())
  const list = (quota: string, offset: number) => pushMembers(db, {projectId: 'P1', quotaId: quota, members: members(2, offset)}, clock.now())

  it("replaces a quota's PUT across another quota's PUT and member list", async () => {
    await list('Q2', 0)
    await Q1(5)
    expect(await pending()).toEqual(['PUT ', 'PUT /quotas/Q2', 'PUT /quotas/Q2/members', 'PUT /quotas/Q1'])
  })

  it("keeps a quota's PUT that its own member list or a removal from it, or any event, waits for", async () => {
    await list('Q1', 0)
    await Q1(5)
    expect(await pending()).toEqual(['PUT ', 'PUT /quotas/Q1', 'PUT /quotas/Q2', 'PUT /quotas/Q1/members', 'PUT /quotas/Q1'])
    await removeMember(db, 'P1', 'Q1', NPI[0]!, clock.now())
    await Q1(6)
    expect((await pending()).filter((p) => p === 'PUT /quotas/Q1')).toHaveLength(3)
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q2', npi: NPI[1]!, state: 'start'}, clock.now())
    await pushQuota(db, 'P1', quotaInput({quota_id: 'Q2', limit: 9}), clock.now())
    expect((await pending()).filter((p) => p === 'PUT /quotas/Q2')).toHaveLength(2)
  })

  it("replaces a member list across an event and another quota's removal, not across a removal from itself", async () => {
    await list('Q1', 0)
    await list('Q2', 10)
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[0]!, state: 'start'}, clock.now())
    await removeMember(db, 'P1', 'Q2', NPI[10]!, clock.now())
    await list('Q1', 20)
    expect((await pending()).filter((p) => p === 'PUT /quotas/Q1/members')).toHaveLength(1)
    await removeMember(db, 'P1', 'Q1', NPI[20]!, clock.now())
    await list('Q1', 30)
    expect((await pending()).filter((p) => p === 'PUT /quotas/Q1/members')).toHaveLength(2)
  })

  it('never replaces a PUT that is being sent right now, but one whose sender gave up its lease', async () => {
    const names = async () => {
      const rows = await db
        .selectFrom('partner_deliveries as d')
        .innerJoin('partner_delivery_bodies as b', 'b.seq', 'd.seq')
        .select('b.body')
        .where('d.project_id', '=', 'P9')
        .where('d.status', '=', 'pending')
        .orderBy('d.seq')
        .execute()
      return rows.map((r) => JSON.parse(r.body).name)
    }
    await pushProject(db, projectInput({project_id: 'P9', name: 'v1'}), {}, clock.now())
    const [head] = await repo.listDeliveries(db, {projectId: 'P9'})
    // Its sender took it this very millisecond.
    await repo.lease(db, [head!.seq], `${hostname()}:${process.pid}:serve`, iso(clock.now()))
    await pushProject(db, projectInput({project_id: 'P9', name: 'v2'}), {}, clock.now())
    expect(await names()).toEqual(['v1', 'v2'])
    // A millisecond later the lease has run out: nobody is sending v1 any more.
    clock.advance(0.001)
    await pushProject(db, projectInput({project_id: 'P9', name: 'v3'}), {}, clock.now())
    expect(await names()).toEqual(['v3'])
  })

  it('a replaced row is never sent: the partner gets the newest state once, in order', async () => {
    await Q1(5)
    await Q1(6)
    const transport = new FakeTransport()
    await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain()
    expect(transport.requests.map((r) => `${r.method} ${new URL(r.url).pathname}`)).toEqual([
      'PUT /v1/projects/P1',
      'PUT /v1/projects/P1/quotas/Q2',
      'PUT /v1/projects/P1/quotas/Q1',
    ])
    expect(JSON.parse(transport.requests[2]!.body!).limit).toBe(6)
    expect((await listDeliveries(db, {status: 'superseded'})).map((d) => d.path)).toEqual(['/v1/projects/P1/quotas/Q1', '/v1/projects/P1/quotas/Q1'])
  })
})

describe('retry-deliveries', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db} = await partnerStore(clock, 1))
  })
  afterEach(async () => store.close())

  /** Fails every pending delivery for good: 18 attempts each over 3 days, against a partner answering 503. */
  async function failAll(transport: FakeTransport): Promise<void> {
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport})
    for (let i = 0; i < 200; i++) {
      await w.drain()
      const later = (await listDeliveries(db, {status: 'pending'})).map((d) => Date.parse(d.next_attempt_at!)).filter((t) => t > clock.now().getTime())
      if (later.length === 0) return
      clock.advance((Math.min(...later) - clock.now().getTime()) / 1000)
    }
    throw new Error('still pending')
  }

  it('asks for a selection, and refuses unknown ids and deliveries that have not failed', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    const [row] = await listDeliveries(db, {})
    for (const selection of [{}, {ids: []}, {allFailed: false}]) {
      await expect(retryDeliveries(db, selection, clock.now()), JSON.stringify(selection)).rejects.toMatchObject({
        code: 'bad_request',
        message: 'give --id ID (repeatable) or --failed',
      })
    }
    await expect(retryDeliveries(db, {ids: ['no-such-id']}, clock.now())).rejects.toMatchObject({code: 'not_found', message: 'id: no delivery "no-such-id"'})
    await expect(retryDeliveries(db, {ids: [row!.id]}, clock.now())).rejects.toMatchObject({code: 'conflict', message: `id: delivery "${row!.id}" is pending, not failed`})
    expect(await listDeliveries(db, {})).toMatchObject([{status: 'pending', attempts: 0}])
  })

  it('gives a retried delivery a fresh 3 days of retries, due now, and leaves other failed ones alone', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    await pushProject(db, projectInput({project_id: 'P2'}), {}, clock.now())
    const transport = new FakeTransport(() => 503)
    await failAll(transport)
    const [p1, p2] = await listDeliveries(db, {})
    expect([p1!.status, p2!.status]).toEqual(['failed', 'failed'])
    clock.advance(3600)
    expect(await retryDeliveries(db, {ids: [p1!.id]}, clock.now())).toEqual({requeued: [p1!.id], superseded: []})
    expect(await listDeliveries(db, {})).toMatchObject([
      {status: 'pending', attempts: 0, next_attempt_at: iso(clock.now())},
      {status: 'failed', attempts: 18, next_attempt_at: null},
    ])
    // Failing again, it waits 5 s as a new delivery would, rather than giving up at once.
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport})
    expect(await w.drain()).toMatchObject({attempted: 1})
    expect((await listDeliveries(db, {}))[0]).toMatchObject({status: 'pending', attempts: 1, next_attempt_at: iso(new Date(clock.now().getTime() + 5_000))})
  })

  it('marks failed member-list chunks superseded when a newer list was queued, and resends failed events', async () => {
    await pushProject(db, projectInput(), {}, clock.now())
    await pushQuota(db, 'P1', quotaInput({limit: 10}), clock.now())
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(4), chunk: 2}, clock.now())
    await pushEvent(db, {project_id: 'P1', quota_id: 'Q1', npi: NPI[0]!, state: 'start'}, clock.now())
    // The partner takes the project and quota and refuses the rest: each fails for good in turn.
    await failAll(new FakeTransport((r) => (r.url.includes('members') || r.url.includes('events') ? 503 : 200)))
    await pushMembers(db, {projectId: 'P1', quotaId: 'Q1', members: members(1, 10)}, clock.now())
    const failed = await listDeliveries(db, {status: 'failed'})
    expect(failed.map((d) => `${d.method} ${d.path}`)).toEqual(['PUT /v1/projects/P1/quotas/Q1/members', 'POST /v1/projects/P1/quotas/Q1/members', 'POST /v1/projects/P1/events'])
    const result = await retryDeliveries(db, {allFailed: true}, clock.now())
    expect(result).toEqual({requeued: [failed[2]!.id], superseded: [failed[0]!.id, failed[1]!.id]})
    expect((await listDeliveries(db, {status: 'pending'})).map((d) => `${d.method} ${d.path}`)).toEqual(['POST /v1/projects/P1/events', 'PUT /v1/projects/P1/quotas/Q1/members'])
  })
})
