import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {listDeliveries} from '../../../src/interfaces/partner/outbox.js'
import * as repo from '../../../src/interfaces/partner/repository.js'
import {pushProject} from '../../../src/interfaces/partner/service.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {ManualClock} from '../../../src/lib/clock.js'
import type {Store} from '../../../src/store/db.js'
import {FakeTransport, partnerStore, projectInput} from './helpers.js'

// Writing an attempt's outcome can be made to fail: the store going away under the worker.
vi.mock('../../../src/interfaces/partner/repository.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/interfaces/partner/repository.js')>()
  return {...real, updateDelivery: vi.fn(real.updateDelivery)}
})

/** What the store says when it was closed under a request: a store failure, tried again. */
const storeGone = () => new Error('database connection is not open')

/**
 * A push that reached the partner while the store could not be written (a database restart) is
 * recorded once the store is back, not sent a second time; an outcome that cannot be written in
 * time leaves the row to be sent again.
 */
describe('recording an attempt while the store is away', () => {
  let clock: ManualClock
  let store: Store
  let db: Store['db']

  beforeEach(async () => {
    clock = new ManualClock('2026-01-15T12:00:00.000Z')
    ;({store, db} = await partnerStore(clock, 1))
    await pushProject(db, projectInput(), {}, clock.now())
  })
  afterEach(async () => {
    vi.mocked(repo.updateDelivery).mockReset()
    store.close()
  })

  it('writes the outcome once the store answers again, and sends the push only once', async () => {
    vi.mocked(repo.updateDelivery).mockRejectedValueOnce(storeGone())
    const transport = new FakeTransport()
    expect(await new DeliveryWorker({db, keys: store.keys, clock, transport}).drain()).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    expect(transport.requests).toHaveLength(1)
    expect(await listDeliveries(db, {})).toMatchObject([{status: 'delivered', attempts: 1}])
  })

  it('gives up at once on an error that is not the store failing, and sends the row again on the next drain', async () => {
    vi.mocked(repo.updateDelivery).mockRejectedValueOnce(new Error('a bug'))
    const transport = new FakeTransport()
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport})
    await expect(w.drain()).rejects.toThrow('a bug')
    expect(await listDeliveries(db, {})).toMatchObject([{status: 'pending', attempts: 0}])
    expect(await w.drain()).toEqual({attempted: 1, delivered: 1, failedAttempts: 0})
    expect(transport.requests).toHaveLength(2)
    expect(transport.requests[1]!.headers['x-medpanel-delivery']).toBe(transport.requests[0]!.headers['x-medpanel-delivery'])
  })

  it('stops trying to write when the lease would end before the next try', async () => {
    vi.mocked(repo.updateDelivery).mockRejectedValueOnce(storeGone())
    // A request timeout that leaves 50 ms of the 30 s lease: less than the first 100 ms wait.
    const w = new DeliveryWorker({db, keys: store.keys, clock, transport: new FakeTransport(), timeoutMs: 29_950})
    await expect(w.drain()).rejects.toThrow('database connection is not open')
    expect(await listDeliveries(db, {})).toMatchObject([{status: 'pending', attempts: 0}])
  })
})
