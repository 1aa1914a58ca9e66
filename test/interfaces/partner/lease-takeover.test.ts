import {hostname} from 'node:os'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {listDeliveries} from '../../../src/interfaces/partner/outbox.js'
import * as repo from '../../../src/interfaces/partner/repository.js'
import {pushProject, pushQuota} from '../../../src/interfaces/partner/service.js'
import type {PartnerRequest, PartnerResponse} from '../../../src/http/outbound.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {iso, ManualClock} from '../../../src/lib/clock.js'
import type {Store} from '../../../src/store/db.js'
import {FakeTransport, partnerStore, projectInput, quotaInput} from './helpers.js'

/**
 * Who may send a delivery while another sender holds it: a sender that hangs keeps its rows for
 * its lease (the 10 s request timeout plus 20 s), then anyone takes them over; a sender that
 * died on this host gives them up at once; nothing is ever sent twice by overlapping drains.
 */

/** Resolves once `condition` holds, looking again every event-loop turn; fails after 5 s. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within 5 s: ${condition}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** A transport whose answers the test gives by hand, one per request, in order. */
class HeldTransport {
  readonly requests: PartnerRequest[] = []
  private readonly answers: ((response: PartnerResponse) => void)[] = []
  send(request: PartnerRequest): Promise<PartnerResponse> {
    this.requests.push(request)
    return new Promise((resolve) => this.answers.push(resolve))
  }
  answer(index: number, status = 200): void {
    this.answers[index]!({status, body: '{}'})
  }
}

/** A process id no process has: a sender on this host that was killed. */
const DEAD_PID = 2_147_483_646

describe('leases: a delivery held by one sender', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db} = await partnerStore(clock, 1))
    await pushProject(db, projectInput(), {}, clock.now())
  })
  afterEach(async () => store.close())

  const head = async () => (await repo.listDeliveries(db, {}))[0]!

  it('is left alone while its sender hangs, and taken over once its 30 s lease is over', async () => {
    const hung = new HeldTransport()
    const first = new DeliveryWorker({db, keys: store.keys, clock, transport: hung})
    const stuck = first.drain()
    await until(() => hung.requests.length === 1)
    const row = await head()
    expect(row.lease_owner).toBe(first.owner)
    expect(Date.parse(row.lease_until!) - clock.now().getTime()).toBe(30_000)

    const transport = new FakeTransport()
    const second = new DeliveryWorker({db, keys: store.keys, clock, transport})
    expect(await second.drain()).toEqual({attempted: 0, delivered: 0, failedAttempts: 0})
    clock.advance(29)
    expect(await second.drain()).toEqual({attempted: 0, delivered: 0, failedAttempts: 0})
    expect(transport.requests).toHaveLength(0)
    clock.advance(2)
    expect(await second.drain()).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    expect(transport.requests[0]!.headers['x-medpanel-delivery']).toBe(hung.requests[0]!.headers['x-medpanel-delivery'])

    hung.answer(0)
    await stuck
    expect(await listDeliveries(db, {})).toMatchObject([{status: 'delivered', attempts: 1}])
  })

  it('is sent again at once when its sender was a process of this host that died', async () => {
    await repo.lease(db, [(await head()).seq], `${hostname()}:${DEAD_PID}:killed`, iso(new Date(clock.now().getTime() + 30_000)))
    const transport = new FakeTransport()
    expect(await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain()).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    expect((await head()).lease_owner).toBeNull()
  })

  it('an owner whose process id cannot be read counts as dead, not as alive forever', async () => {
    for (const pid of ['', 'x', '0', '-5', '1.5']) {
      await repo.updateDelivery(db, (await head()).seq, {status: 'pending', lease_owner: `${hostname()}:${pid}:w`, lease_until: iso(new Date(clock.now().getTime() + 30_000))})
      const transport = new FakeTransport()
      expect(await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain(), `pid "${pid}"`).toMatchObject({attempted: 1})
    }
  })

  it('waits out the lease of a live process of this host, and of a process of another host', async () => {
    const until30s = iso(new Date(clock.now().getTime() + 30_000))
    for (const owner of [`${hostname()}:${process.pid}:serve`, `elsewhere.example:${DEAD_PID}:serve`]) {
      await repo.updateDelivery(db, (await head()).seq, {status: 'pending', lease_owner: owner, lease_until: until30s})
      const transport = new FakeTransport()
      expect(await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain(), owner).toMatchObject({attempted: 0})
      expect((await head()).lease_owner, owner).toBe(owner)
    }
  })

  it('a worker takes back its own lease on a row whose outcome it could not record, and sends it again', async () => {
    const transport = new FakeTransport()
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport})
    // As left by an attempt whose outcome could not be written (the store went away).
    await repo.lease(db, [(await head()).seq], w.owner, iso(new Date(clock.now().getTime() + 30_000)))
    expect(await w.drain()).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
  })

  it('overlapping drains of one worker never send a row twice', async () => {
    const held = new HeldTransport()
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport: held})
    const firstDrain = w.drain()
    await until(() => held.requests.length === 1)
    // A second drain (serve's loop woken by a new push) while the first send is in flight.
    expect(await w.drain()).toEqual({attempted: 0, delivered: 0, failedAttempts: 0})
    held.answer(0)
    expect(await firstDrain).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    expect(held.requests).toHaveLength(1)
  })

  it('a --wait drain of another project does not wait for a sender that holds this one', async () => {
    await pushProject(db, projectInput({project_id: 'P2'}), {}, clock.now())
    await repo.lease(db, [(await head()).seq], `${hostname()}:${process.pid}:serve`, iso(new Date(clock.now().getTime() + 30_000)))
    const transport = new FakeTransport()
    // Only setTimeout is faked: a drain that pauses to look again leaves a timer behind.
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      let settled = false
      const waiting = new DeliveryWorker({db, keys: store.keys, clock, transport}).drain({projectIds: ['P2'], now: true}).finally(() => (settled = true))
      await until(() => settled || vi.getTimerCount() > 0)
      expect(settled, 'the drain of P2 waited for the sender of P1').toBe(true)
      expect(await waiting).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    } finally {
      vi.useRealTimers()
    }
    expect(transport.requests.map((r) => new URL(r.url).pathname)).toEqual(['/v1/projects/P2'])
  })

  it('a --wait drain does not wait for a lease that has run out', async () => {
    await pushQuota(db, 'P1', quotaInput(), clock.now())
    const quota = (await repo.listDeliveries(db, {}))[1]!
    // The quota's sender on another host stopped a second ago, its lease over; the project PUT before it fails.
    await repo.lease(db, [quota.seq], 'elsewhere.example:1:serve', iso(new Date(clock.now().getTime() - 1_000)))
    const transport = new FakeTransport(() => 503)
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      let settled = false
      const waiting = new DeliveryWorker({db, keys: store.keys, clock, transport}).drain({projectIds: ['P1'], now: true}).finally(() => (settled = true))
      await until(() => settled || vi.getTimerCount() > 0)
      expect(settled, 'the drain waited for a lease that had run out').toBe(true)
      // The failed head is tried once per drain, though it stays pending; the quota waits behind it.
      expect(await waiting).toEqual({attempted: 1, delivered: 0, failedAttempts: 1})
    } finally {
      vi.useRealTimers()
    }
    expect(transport.requests.map((r) => new URL(r.url).pathname)).toEqual(['/v1/projects/P1'])
  })
})
