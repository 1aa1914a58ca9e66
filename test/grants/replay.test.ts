import {sql} from 'kysely'
import {afterEach, describe, expect, it} from 'vitest'
import {spendJti, type Spend} from '../../src/grants/replay.js'
import {config} from '../../src/config.js'
import {type Database, openStore, SERVICE_SCHEMA} from '../../src/schema.js'
import {narrow} from '../../src/store/database.js'
import type {GrantsDb} from '../../src/grants/tables.js'
import {openStore as openStoreWith, type Store} from '../../src/store/db.js'
import {writeStats} from '../../src/store/transactions.js'
import {emptyStore, openTestStore, reopenableStore} from '../helpers/store.js'

/*
 * The replay store (src/grants/replay.ts): one table for every spent jti, DPoP proofs and client
 * assertions alike, whose insert is the replay check in one process, across processes on one
 * store, and within one batch of the writer.
 */
const NOW = new Date('2026-12-02T12:00:00Z')
const spend = (over: Partial<Spend> = {}): Spend => ({kind: 'dpop', issuer: 'jkt-a', jti: 'jti-1', expiresAt: '2026-12-02T12:01:20.000Z', ...over})
const count = async (store: Store) => Number((await sql<{n: number | string}>`select count(*) as n from spent_jtis`.execute(store.db)).rows[0]!.n)

/** The store as grants' queries see it. */
const grantsOf = (store: Store): GrantsDb => narrow(store.db)

const stores: Store[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})
async function fresh(): Promise<Store> {
  const store = await openTestStore()
  stores.push(store)
  return store
}

describe('spending a jti', () => {
  it('is true once, then false for the same proof, whichever durability', async () => {
    const store = await fresh()
    const db = grantsOf(store)
    expect(await spendJti(db, spend(), NOW, 'relaxed')).toBe(true)
    expect(await spendJti(db, spend(), NOW, 'relaxed')).toBe(false)
    expect(await spendJti(db, spend(), NOW, 'durable')).toBe(false)
    expect(await spendJti(db, spend({kind: 'client_assertion', issuer: 'client-1', jti: 'a'}), NOW, 'durable')).toBe(true)
    expect(await spendJti(db, spend({kind: 'client_assertion', issuer: 'client-1', jti: 'a'}), NOW, 'durable')).toBe(false)
  })

  it('keeps kinds and issuers apart: the same jti of another key or client is another proof', async () => {
    const store = await fresh()
    const db = grantsOf(store)
    const spent = await Promise.all([spend(), spend({issuer: 'jkt-b'}), spend({kind: 'client_assertion', issuer: 'jkt-a'})].map((one) => spendJti(db, one, NOW, 'relaxed')))
    expect(spent).toEqual([true, true, true])
    expect(await count(store)).toBe(3)
  })

  it('refuses the second copy of a proof spent in the same batch, and writes the batch as one transaction', async () => {
    const store = await fresh()
    const db = grantsOf(store)
    const before = writeStats(store.db).writes
    const spent = await Promise.all([spend(), spend({jti: 'jti-2'}), spend(), spend({jti: 'jti-2'}), spend({jti: 'jti-3'})].map((one) => spendJti(db, one, NOW, 'relaxed')))
    expect(spent).toEqual([true, true, false, false, true])
    expect(writeStats(store.db).writes - before).toBe(1)
    expect(await count(store)).toBe(3)
  })

  it('refuses a proof another process on the store spent', async () => {
    const place = await reopenableStore()
    try {
      const first = await openStore(place.options)
      stores.push(first)
      const second = await openStore(place.options)
      stores.push(second)
      expect(await spendJti(grantsOf(first), spend(), NOW, 'relaxed')).toBe(true)
      expect(await spendJti(grantsOf(second), spend(), NOW, 'relaxed')).toBe(false)
      expect(await spendJti(grantsOf(second), spend({jti: 'jti-2'}), NOW, 'durable')).toBe(true)
      expect(await spendJti(grantsOf(first), spend({jti: 'jti-2'}), NOW, 'durable')).toBe(false)
    } finally {
      for (const store of stores.splice(0)) await store.close()
      place.drop()
    }
  })

  it('sweeps the rows past their expiry, of every kind, at most once a sweep interval', async () => {
    const store = await fresh()
    const db = grantsOf(store)
    const early = new Date(NOW.getTime() - 3_600_000)
    expect(await spendJti(db, spend({expiresAt: '2026-12-02T11:00:01.000Z'}), early, 'relaxed')).toBe(true)
    expect(await spendJti(db, spend({kind: 'client_assertion', issuer: 'c', expiresAt: '2026-12-02T11:05:00.000Z'}), early, 'durable')).toBe(true)
    expect(await count(store)).toBe(2)
    // The first row has expired, but within the interval of the last sweep nothing is deleted; past it, every expired row goes.
    expect(await spendJti(db, spend({jti: 'kept'}), new Date(early.getTime() + config.grants.replaySweepEveryMs - 1), 'relaxed')).toBe(true)
    expect(await count(store)).toBe(3)
    expect(await spendJti(db, spend({jti: 'late'}), NOW, 'relaxed')).toBe(true)
    const left = (await sql<{jti: string}>`select jti from spent_jtis order by jti`.execute(store.db)).rows.map((row) => row.jti)
    expect(left).toEqual(['kept', 'late'])
  })
})

describe('a store written before the replay store (2026120403_replay_store)', () => {
  it('keeps every jti spent in dpop_proofs and used_jtis spent, and drops both tables', async () => {
    const place = emptyStore()
    try {
      const before = {...SERVICE_SCHEMA, migrations: Object.fromEntries(Object.entries(SERVICE_SCHEMA.migrations).filter(([name]) => name !== '2026120403_replay_store'))}
      const old = await openStoreWith<Database>(place.options, before)
      await sql`insert into dpop_proofs (jkt, jti, expires_at) values ('jkt-a', 'proof-1', '2026-12-02T12:01:20.000Z'), ('jkt-b', 'proof-1', '2026-12-02T12:01:30.000Z')`.execute(
        old.db,
      )
      await sql`insert into used_jtis (purpose, client_id, jti, expires_at) values ('client_assertion', 'client-1', 'assertion-1', '2026-12-02T12:05:10.000Z')`.execute(old.db)
      await old.close()
      const store = await openStore(place.options)
      stores.push(store)
      const rows = (await sql<Record<string, string>>`select expires_at, kind, issuer, jti from spent_jtis order by expires_at`.execute(store.db)).rows
      expect(rows).toEqual([
        {expires_at: '2026-12-02T12:01:20.000Z', kind: 'dpop', issuer: 'jkt-a', jti: 'proof-1'},
        {expires_at: '2026-12-02T12:01:30.000Z', kind: 'dpop', issuer: 'jkt-b', jti: 'proof-1'},
        {expires_at: '2026-12-02T12:05:10.000Z', kind: 'client_assertion', issuer: 'client-1', jti: 'assertion-1'},
      ])
      const db = grantsOf(store)
      expect(await spendJti(db, spend({issuer: 'jkt-b', jti: 'proof-1', expiresAt: '2026-12-02T12:01:30.000Z'}), NOW, 'relaxed')).toBe(false)
      expect(await spendJti(db, spend({kind: 'client_assertion', issuer: 'client-1', jti: 'assertion-1', expiresAt: '2026-12-02T12:05:10.000Z'}), NOW, 'durable')).toBe(false)
      await expect(sql`select count(*) from dpop_proofs`.execute(store.db)).rejects.toThrow()
      await expect(sql`select count(*) from used_jtis`.execute(store.db)).rejects.toThrow()
    } finally {
      for (const store of stores.splice(0)) await store.close()
      place.drop()
    }
  })
})
