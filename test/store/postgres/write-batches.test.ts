import {sql} from 'kysely'
import {narrow} from '../../../src/store/database.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import * as balance from '../../../src/interfaces/balance/service.js'
import {findMemberBy} from '../../../src/registry/repository.js'
import type {Db} from '../../../src/schema.js'
import {openStore} from '../../../src/schema.js'
import type {Store, StoreOptions} from '../../../src/store/db.js'
import {writeStats, writeTransaction} from '../../../src/store/transactions.js'
import {prepared} from '../../../src/store/prepared.js'
import {onPostgres, openTestStore, reopenableStore} from '../../helpers/store.js'
import {PAYPAL_DETAILS, seedClients, seedMember} from '../../interfaces/balance/setup.js'

// The group-commit writer on PostgreSQL (src/store/postgres/writer.ts).
describe.skipIf(!onPostgres)('PostgreSQL group commit', () => {
  let store: Store
  let db: Db
  beforeAll(async () => {
    store = await openTestStore()
    db = store.db
    await sql`create table batch_probe (name text primary key, txid bigint not null)`.execute(db)
  })
  afterAll(() => store?.close())

  const txid = async (trx: Db) => Number((await sql<{id: string}>`select txid_current()::text as id`.execute(trx)).rows[0]!.id)
  const insert = (trx: Db, name: string) => sql`insert into batch_probe (name, txid) values (${name}, txid_current())`.execute(trx)
  const names = async () => (await sql<{name: string}>`select name from batch_probe order by name`.execute(db)).rows.map((r) => r.name)
  const clear = () => sql`delete from batch_probe`.execute(db)

  it('commits the writes of one turn in one transaction, one commit', async () => {
    await clear()
    const before = {...writeStats(db)}
    const ids = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((name, i) =>
        writeTransaction(
          db,
          async (trx) => {
            await insert(trx, name)
            return txid(trx)
          },
          // Both isolation levels: one batch each.
          {isolation: i < 3 ? 'serializable' : 'read committed'},
        ),
      ),
    )
    expect(new Set(ids.slice(0, 3)).size).toBe(1)
    expect(new Set(ids.slice(3)).size).toBe(1)
    expect(ids[0]).not.toBe(ids[3])
    expect(writeStats(db).writes - before.writes).toBe(5)
    expect(writeStats(db).commits - before.commits).toBe(2)
    expect(await names()).toEqual(['a', 'b', 'c', 'd', 'e'])
  })

  it('rolls a failing request back alone while its batch-mates commit', async () => {
    await clear()
    const results = await Promise.allSettled([
      writeTransaction(db, (trx) => insert(trx, 'kept-1')),
      writeTransaction(db, async (trx) => {
        await insert(trx, 'undone')
        throw new Error('refused')
      }),
      // A statement error aborts the request's subtransaction, not the batch.
      writeTransaction(db, (trx) => insert(trx, 'kept-1')),
      writeTransaction(db, (trx) => insert(trx, 'kept-2')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/duplicate key/)
    expect(await names()).toEqual(['kept-1', 'kept-2'])
  })

  it('runs a batch again whole after a serialization failure, and answers only what committed', async () => {
    await clear()
    await sql`insert into batch_probe (name, txid) values ('hot', 0)`.execute(db)
    let attempts = 0
    let mateRuns = 0
    const answered: string[] = []
    const mate = writeTransaction(db, async (trx) => {
      mateRuns++
      await insert(trx, 'mate')
    }).then(() => answered.push('mate'))
    const conflicted = writeTransaction(db, async (trx) => {
      attempts++
      await sql`select txid from batch_probe where name = 'hot'`.execute(trx)
      // Another session changes the row this snapshot has read, outside any batch (the first time only).
      if (attempts === 1) await sql`update batch_probe set txid = txid + 1 where name = 'hot'`.execute(db)
      await sql`update batch_probe set txid = 100 where name = 'hot'`.execute(trx)
      return attempts
    }).then((value) => answered.push('conflicted') && value)
    await Promise.all([mate, conflicted])
    expect(attempts).toBe(2)
    expect(mateRuns).toBe(2)
    expect(answered.sort()).toEqual(['conflicted', 'mate'])
    // The mate's insert of the first attempt was rolled back with it: one row, no duplicate key.
    expect(await names()).toEqual(['hot', 'mate'])
    expect(Number((await sql<{txid: string}>`select txid from batch_probe where name = 'hot'`.execute(db)).rows[0]!.txid)).toBe(100)
  })

  it('fails every request of a batch whose conflicts persist, with nothing written', async () => {
    await clear()
    let runs = 0
    const conflict = Object.assign(new Error('could not serialize access'), {code: '40P01'})
    const results = await Promise.allSettled([
      writeTransaction(db, (trx) => insert(trx, 'never')),
      writeTransaction(db, async () => {
        runs++
        throw conflict
      }),
    ])
    expect(runs).toBe(12)
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(results.map((r) => (r as PromiseRejectedResult).reason)).toEqual([conflict, conflict])
    expect(await names()).toEqual([])
  })

  it('sends prepared queries as named statements', async () => {
    const probe = prepared(1, (trx: Db, name: string) => trx.selectFrom('auth_failures').select('subject').where('subject', '=', name))
    const statements = await writeTransaction(db, async (trx) => {
      await probe(trx, 'nobody')
      return (await sql<{name: string; statement: string}>`select name, statement from pg_prepared_statements`.execute(trx)).rows
    })
    const ours = statements.find((s) => s.statement.includes('"auth_failures"') && s.statement.includes('"subject" = $1'))
    expect(ours?.name).toMatch(/^medpanel_[0-9a-f]{16}$/)
  })
})

describe.skipIf(!onPostgres)('PostgreSQL batches of two processes on one account', () => {
  let stores: Store[] = []
  let drop: () => void = () => undefined
  let options: StoreOptions
  beforeAll(async () => {
    const reopenable = await reopenableStore()
    drop = reopenable.drop
    options = reopenable.options
    stores = [await openStore(options), await openStore(options)]
  })
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()))
    drop()
  })

  it('never overdraw, and one Idempotency-Key gives one transaction', async () => {
    const now = new Date('2026-11-26T00:00:00Z')
    const [first, second] = stores.map((s) => s.db) as [Db, Db]
    await seedClients(stores[0]!, now)
    const added = await seedMember(first, now)
    const member = (await findMemberBy(narrow(first), 'id', added.user_id))!
    await balance.postCredit(narrow(first), member, {type: 'HONORARIUM', amount: '100'}, now)
    const body = {type: 'CHARITY', amount: 7, member_details: PAYPAL_DETAILS}
    const withdraw = (db: Db, key?: string) => balance.createWithdrawal(narrow(db), member, body, {now, clientId: 'balance-client', idempotencyKey: key})
    const results = await Promise.allSettled([
      ...Array.from({length: 40}, (_, i) => withdraw(i % 2 ? first : second)),
      ...Array.from({length: 10}, (_, i) => withdraw(i % 2 ? first : second, 'same-key')),
    ])
    const keyed = results.slice(40).filter((r) => r.status === 'fulfilled') as PromiseFulfilledResult<balance.WithdrawalResult>[]
    // Every keyed request got the one transaction (or, once funds ran out first, none did).
    expect(new Set(keyed.map((r) => r.value.created.transaction_id)).size).toBeLessThanOrEqual(1)
    expect(keyed.filter((r) => !r.value.replayed).length).toBeLessThanOrEqual(1)
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/insufficient funds/)
    const rows = await first.selectFrom('balance_transactions').selectAll().where('member_id', '=', member.id).where('type', 'in', ['WITHDRAWAL', 'WITHDRAWAL_FEE']).execute()
    const spent = rows.reduce((sum, row) => sum + Math.abs(Number(row.amount)), 0)
    const summary = await balance.getSummary(narrow(first), member)
    const available = Number(summary.available_funds.toString())
    expect(available).toBeGreaterThanOrEqual(0)
    expect(available).toBeCloseTo(100 - spent, 6)
    // As many as fit went through: what is left is less than one more withdrawal with its fee.
    const each = spent / rows.filter((row) => row.type === 'WITHDRAWAL').length
    expect(available).toBeLessThan(each)
    expect(rows.filter((row) => row.type === 'WITHDRAWAL').length).toBe(results.filter((r) => r.status === 'fulfilled' && !r.value.replayed).length)
  })

  it('take the accounts of a batch in one order, so two processes never deadlock', async () => {
    const now = new Date('2026-11-26T00:00:00Z')
    const [first, second] = stores.map((s) => s.db) as [Db, Db]
    await seedClients(stores[0]!, now).catch(() => undefined)
    const members = []
    for (let i = 0; i < 16; i++) {
      const member = (await findMemberBy(narrow(first), 'id', (await seedMember(first, now)).user_id))!
      await balance.postCredit(narrow(first), member, {type: 'HONORARIUM', amount: '100'}, now)
      members.push(member)
    }
    const body = {type: 'CHARITY', amount: 1, member_details: PAYPAL_DETAILS}
    const reruns = () => writeStats(first).reruns + writeStats(second).reruns
    const before = reruns()
    for (let round = 0; round < 5; round++) {
      // One process asks in ascending order of account, the other in descending: locked in the
      // order they arrived, the two batches of a lane would each hold what the other waits for.
      await Promise.all([
        ...members.map((member) => balance.createWithdrawal(narrow(first), member, body, {now})),
        ...members.toReversed().map((member) => balance.createWithdrawal(narrow(second), member, body, {now})),
      ])
    }
    expect(reruns() - before).toBe(0)
    for (const member of members) expect((await balance.getSummary(narrow(first), member)).available_funds.toString()).toBe('90')
  })

  it('take turns across processes: what queues while another holds the lane joins one batch', async () => {
    const now = new Date('2026-11-26T00:00:00Z')
    const [first, second] = stores.map((s) => s.db) as [Db, Db]
    await seedClients(stores[0]!, now).catch(() => undefined)
    const member = (await findMemberBy(narrow(first), 'id', (await seedMember(first, now)).user_id))!
    await balance.postCredit(narrow(first), member, {type: 'HONORARIUM', amount: '100'}, now)
    const body = {type: 'CHARITY', amount: 1, member_details: PAYPAL_DETAILS}
    // The withdrawal lane's advisory lock ("medp", lane 0 of cluster lanes 1), held by another
    // session as another process's batch would hold it.
    const lane = sql`${sql.lit(0x6d656470)}, ${sql.lit(1000)}`
    const before = {...writeStats(second)}
    const granted = await first.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${lane})`.execute(conn)
      const pending: Promise<balance.WithdrawalResult>[] = []
      // Five turns apart: without the turns, the first would commit alone before the others came.
      for (let i = 0; i < 5; i++) {
        pending.push(balance.createWithdrawal(narrow(second), member, body, {now}))
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(writeStats(second).commits - before.commits).toBe(0)
      await sql`select pg_advisory_unlock(${lane})`.execute(conn)
      return Promise.all(pending)
    })
    expect(granted.every((result) => !result.replayed)).toBe(true)
    expect(writeStats(second).writes - before.writes).toBe(5)
    expect(writeStats(second).commits - before.commits).toBe(1)
    expect((await balance.getSummary(narrow(first), member)).available_funds.toString()).toBe('95')
  })

  it('with two write lanes, take turns per lane: one lane waiting holds up none of the other', async () => {
    const now = new Date('2026-11-26T00:00:00Z')
    const [first] = stores.map((s) => s.db) as [Db]
    const lanes = await openStore({...options, writeLanes: 2})
    try {
      await seedClients(stores[0]!, now).catch(() => undefined)
      const funded = async () => {
        const member = (await findMemberBy(narrow(first), 'id', (await seedMember(first, now)).user_id))!
        await balance.postCredit(narrow(first), member, {type: 'HONORARIUM', amount: '10'}, now)
        return member
      }
      const one = await funded()
      const next = await funded()
      // Account ids of each lane: lane 0 takes the even ones, lane 1 the odd.
      const [even, odd] = one.id % 2 === 0 ? [one, next] : [next, one]
      const body = {type: 'CHARITY', amount: 1, member_details: PAYPAL_DETAILS}
      const lane0 = sql`${sql.lit(0x6d656470)}, ${sql.lit(1000)}`
      await first.connection().execute(async (conn) => {
        await sql`select pg_advisory_lock(${lane0})`.execute(conn)
        let evenDone = false
        const waiting = balance.createWithdrawal(narrow(lanes.db), even, body, {now}).then(() => {
          evenDone = true
        })
        try {
          const stuck = new Promise((_, reject) => setTimeout(() => reject(new Error('the odd account waited for lane 0')), 10_000).unref())
          await Promise.race([balance.createWithdrawal(narrow(lanes.db), odd, body, {now}), stuck])
          expect(evenDone).toBe(false)
        } finally {
          await sql`select pg_advisory_unlock(${lane0})`.execute(conn)
        }
        await waiting
      })
      for (const member of [even, odd]) expect((await balance.getSummary(narrow(first), member)).available_funds.toString()).toBe('9')
    } finally {
      await lanes.close()
    }
  })

  it('decide one turn of withdrawals as a set: each sees the grants before it, and a failure stays its own', async () => {
    const now = new Date('2026-11-26T00:00:00Z')
    const [db] = stores.map((s) => s.db) as [Db]
    await seedClients(stores[0]!, now).catch(() => undefined)
    const funded = async (amount: string) => {
      const member = (await findMemberBy(narrow(db), 'id', (await seedMember(db, now)).user_id))!
      await balance.postCredit(narrow(db), member, {type: 'HONORARIUM', amount}, now)
      return member
    }
    const a = await funded('10')
    const c = await funded('5')
    const body = (amount: number) => ({type: 'CHARITY', amount, member_details: PAYPAL_DETAILS})
    const withdraw = (id: number, amount: number, key?: string) => balance.createWithdrawal(narrow(db), {id}, body(amount), {now, clientId: 'balance-client', idempotencyKey: key})
    const reruns = writeStats(db).reruns
    // One turn. A member nobody has (in a's lane, so in its batch) makes the set's statement fail:
    // the batch runs again one withdrawal at a time, and only that one fails.
    const results = await Promise.allSettled([
      withdraw(a.id, 6),
      withdraw(a.id, 6),
      withdraw(a.id, 3, 'set-key'),
      withdraw(a.id, 3, 'set-key'),
      withdraw(a.id + 4000, 1),
      withdraw(c.id, 1),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/insufficient funds: amount 6 exceeds available funds of 4 USD/)
    const [first, replay] = [results[2], results[3]] as PromiseFulfilledResult<balance.WithdrawalResult>[]
    expect(replay!.value).toEqual({created: first!.value.created, replayed: true})
    expect(first!.value.replayed).toBe(false)
    expect((await balance.getSummary(narrow(db), a)).available_funds.toString()).toBe('1')
    expect((await balance.getSummary(narrow(db), c)).available_funds.toString()).toBe('4')
    const ledger = await balance.listTransactions(narrow(db), a)
    expect(ledger.map((t) => [t.type, t.amount.toString(), t.current_balance.toString()])).toEqual([
      ['HONORARIUM', '10', '10'],
      ['WITHDRAWAL', '-6', '4'],
      ['WITHDRAWAL', '-3', '1'],
    ])
    expect(writeStats(db).reruns).toBe(reruns)
  })
})
