import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Store} from '../../src/store/db.js'
import {writeTransaction} from '../../src/store/transactions.js'
import type {Db} from '../../src/schema.js'
import {prepared} from '../../src/store/prepared.js'
import {versionCache} from '../../src/store/version-cache.js'
import {onPostgres, openTestStore} from '../helpers/store.js'

// Prepared queries (src/store/prepared.ts) on the store this run uses (SQLite or PostgreSQL).
describe('prepared queries', () => {
  let store: Store
  beforeAll(async () => {
    store = await openTestStore()
    const now = '2026-11-24T00:00:00.000Z'
    for (const [subject, failures] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const) {
      await store.db.insertInto('auth_failures').values({subject, failures, locked_until: null, last_failure_at: now}).execute()
    }
  })
  afterAll(() => store?.close())

  it('puts each call its own arguments, wherever they land among the statement values', async () => {
    let builds = 0
    const between = prepared(2, (db: Db, low: number, high: number) => {
      builds++
      return db.selectFrom('auth_failures').select('subject').where('failures', '>=', low).where('failures', '<=', high).where('subject', '!=', 'zzz').orderBy('subject')
    })
    expect((await between(store.db, 1, 2)).map((r) => r.subject)).toEqual(['a', 'b'])
    expect((await between(store.db, 2, 3)).map((r) => r.subject)).toEqual(['b', 'c'])
    expect((await between(store.db, 3, 1)).map((r) => r.subject)).toEqual([])
    expect(builds).toBe(1)
  })

  it("inside a write sees the request's own changes, and a failed request's changes roll back with it", async () => {
    // On SQLite these run straight on the batch's connection, past Kysely's queue (StoreContext.direct).
    const failuresOf = prepared(1, (db: Db, subject: string) => db.selectFrom('auth_failures').select('failures').where('subject', '=', subject))
    const setFailures = prepared(2, (db: Db, subject: string, failures: number) => db.updateTable('auth_failures').set({failures}).where('subject', '=', subject))
    const seen = await writeTransaction(store.db, async (trx) => {
      await setFailures(trx, 'a', 10)
      return (await failuresOf(trx, 'a'))[0]?.failures
    })
    expect(seen).toBe(10)
    // Two requests in one batch: the second fails after its update and is undone alone.
    const results = await Promise.allSettled([
      writeTransaction(store.db, async (trx) => setFailures(trx, 'a', 11)),
      writeTransaction(store.db, async (trx) => {
        await setFailures(trx, 'b', 99)
        expect((await failuresOf(trx, 'b'))[0]?.failures).toBe(99)
        throw new Error('refused')
      }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    expect((await failuresOf(store.db, 'a'))[0]?.failures).toBe(11)
    expect((await failuresOf(store.db, 'b'))[0]?.failures).toBe(2)
    await setFailures(store.db, 'a', 1)
  })

  it('refuses a build that computes from an argument instead of passing it through', async () => {
    const bad = prepared(1, (db: Db, subject: string) => db.selectFrom('auth_failures').select('subject').where('subject', '=', `${subject}`))
    await expect(bad(store.db, 'a')).rejects.toThrow(/uses 0 of its 1 arguments/)
  })
})

describe('version cache', () => {
  let store: Store
  beforeAll(async () => {
    store = await openTestStore()
  })
  afterAll(() => store?.close())

  it('reuses a read until the store is written, and keeps only what it is told to', async () => {
    let loads = 0
    const cached = versionCache<string, number>(10, (value) => value >= 0)
    const read = (key: string, value: number) =>
      cached(store.db, key, async () => {
        loads++
        return value
      })
    expect(await read('a', 1)).toBe(1)
    expect(await read('a', 2)).toBe(onPostgres ? 2 : 1)
    expect(await read('b', -1)).toBe(-1)
    expect(await read('b', -2)).toBe(-2)
    const before = loads
    await store.db.insertInto('auth_failures').values({subject: 'w', failures: 1, locked_until: null, last_failure_at: '2026-11-24T00:00:00.000Z'}).execute()
    expect(await read('a', 3)).toBe(3)
    expect(loads).toBe(before + 1)
    // On PostgreSQL the store cannot tell its version: every call reads.
    expect(before).toBe(onPostgres ? 4 : 3)
  })
})
