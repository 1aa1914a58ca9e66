import {sql} from 'kysely'
import {narrow} from '../../src/store/database.js'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {postCredit} from '../../src/interfaces/balance/service.js'
import {openReceiverStore} from '../../src/interfaces/partner/receiver/store.js'
import {ManualClock} from '../../src/lib/clock.js'
import {getMemberRow} from '../../src/registry/service.js'
import {openStore} from '../../src/schema.js'
import type {Store} from '../../src/store/db.js'
import {writeStats, writeTransaction} from '../../src/store/transactions.js'
import {tempDir} from '../helpers/cli.js'
import {AUTH, PAYPAL_DETAILS, seedClients, seedMember} from '../interfaces/balance/setup.js'

const synchronous = async (store: {db: Store<any>['db']}) => (await sql<{synchronous: number}>`pragma synchronous`.execute(store.db)).rows[0]!.synchronous

describe('durable commits', () => {
  const open: {close(): Promise<void>}[] = []
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close()
  })

  it('every connection that writes syncs each commit to disk (synchronous = FULL)', async () => {
    const file = join(tempDir(), 'sync.db')
    // serve, every CLI command and the delivery worker open the service store this way...
    const service = await openStore({file})
    open.push(service)
    expect(await synchronous(service)).toBe(2)
    // ...partner-serve opens its own schema the same way...
    const receiver = await openReceiverStore(join(tempDir(), 'partner.db'))
    open.push(receiver)
    expect(await synchronous(receiver)).toBe(2)
  })

  it('syncs a batch of relaxed writes alone less (synchronous NORMAL), and any batch with a durable write fully', async () => {
    const store = await openStore({file: join(tempDir(), 'relaxed.db')})
    open.push(store)
    const seen = (durability: 'durable' | 'relaxed') => writeTransaction(store.db, async (trx) => synchronous({db: trx}), {durability})
    expect(await Promise.all([seen('relaxed'), seen('relaxed')])).toEqual([1, 1])
    // One durable write in the batch: the whole commit syncs.
    expect(await Promise.all([seen('relaxed'), seen('durable')])).toEqual([2, 2])
    expect(await seen('relaxed')).toBe(1)
    expect(await seen('durable')).toBe(2)
  })

  it('commits the write transactions of one event-loop turn together, each answered with its own result', async () => {
    const store = await openStore({file: join(tempDir(), 'group.db')})
    open.push(store)
    await sql`create table counters (id integer primary key, n integer not null)`.execute(store.db)
    const before = {...writeStats(store.db)}
    const results = await Promise.all(
      Array.from({length: 40}, (_, i) =>
        writeTransaction(store.db, async (trx) => {
          await sql`insert into counters (id, n) values (${i}, ${i * 2})`.execute(trx)
          return i * 2
        }),
      ),
    )
    expect(results).toEqual(Array.from({length: 40}, (_, i) => i * 2))
    const stats = writeStats(store.db)
    expect(stats.writes - before.writes).toBe(40)
    // 40 requests arriving together share far fewer commits (and syncs) than 40.
    expect(stats.commits - before.commits).toBeLessThanOrEqual(2)
    expect((await sql<{n: number}>`select count(*) as n from counters`.execute(store.db)).rows[0]!.n).toBe(40)
  })

  it('a request that fails rolls back alone; the rest of its batch commits', async () => {
    const store = await openStore({file: join(tempDir(), 'alone.db')})
    open.push(store)
    await sql`create table items (id integer primary key)`.execute(store.db)
    const outcomes = await Promise.allSettled([
      writeTransaction(store.db, (trx) => sql`insert into items (id) values (1)`.execute(trx)),
      writeTransaction(store.db, async (trx) => {
        await sql`insert into items (id) values (2)`.execute(trx)
        throw new Error('insufficient funds')
      }),
      writeTransaction(store.db, (trx) => sql`insert into items (id) values (3)`.execute(trx)),
      // A constraint failure in the middle of a request: only that request's rows go.
      writeTransaction(store.db, async (trx) => {
        await sql`insert into items (id) values (4)`.execute(trx)
        await sql`insert into items (id) values (1)`.execute(trx)
      }),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected'])
    expect(((outcomes[1] as PromiseRejectedResult).reason as Error).message).toBe('insufficient funds')
    expect((await sql<{id: number}>`select id from items order by id`.execute(store.db)).rows.map((r) => r.id)).toEqual([1, 3])
  })

  it('when the batch cannot commit, every request in it fails and none of its writes exist', async () => {
    const store = await openStore({file: join(tempDir(), 'unacked.db')})
    open.push(store)
    await sql`create table parents (id integer primary key)`.execute(store.db)
    await sql`create table children (id integer primary key, parent integer not null references parents (id))`.execute(store.db)
    const outcomes = await Promise.allSettled([
      writeTransaction(store.db, (trx) => sql`insert into parents (id) values (1)`.execute(trx)),
      // A deferred foreign key is checked at COMMIT: the batch's commit itself fails.
      writeTransaction(store.db, async (trx) => {
        await sql`pragma defer_foreign_keys = on`.execute(trx)
        await sql`insert into children (id, parent) values (1, 99)`.execute(trx)
      }),
      writeTransaction(store.db, (trx) => sql`insert into parents (id) values (2)`.execute(trx)),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect((await sql<{n: number}>`select count(*) as n from parents`.execute(store.db)).rows[0]!.n).toBe(0)
    // The writer goes on: the next batch commits.
    await writeTransaction(store.db, (trx) => sql`insert into parents (id) values (3)`.execute(trx))
    expect((await sql<{n: number}>`select count(*) as n from parents`.execute(store.db)).rows[0]!.n).toBe(1)
  })

  it("a full store refuses withdrawals with a 503 in interface C's shape, keeps answering reads, and balances once space is back", async () => {
    const store = await openStore({file: join(tempDir(), 'full.db')})
    open.push(store)
    const clock = new ManualClock()
    const app = createApp({store, clock, log: () => undefined})
    await seedClients(store, clock.now())
    const member = await seedMember(store.db, clock.now())
    await postCredit(narrow(store.db), await getMemberRow(narrow(store.db), member.user_id), {type: 'HONORARIUM', amount: '100000'}, clock.now())

    const pages = (await sql<{page_count: number}>`pragma page_count`.execute(store.db)).rows[0]!.page_count
    // SQLITE_FULL exactly as a full disk gives it: the file may not grow past its current size.
    await sql.raw(`pragma max_page_count = ${pages + 2}`).execute(store.db)
    const withdraw = () =>
      app.request(`/balance/user_id/${member.user_id}/withdrawals`, {
        method: 'POST',
        headers: {...AUTH, 'content-type': 'application/json'},
        body: JSON.stringify({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}),
      })
    const answers = await Promise.all(Array.from({length: 400}, withdraw))
    const refused = answers.filter((res) => res.status !== 201)
    expect(refused.length).toBeGreaterThan(0)
    for (const res of refused) {
      expect(res.status).toBe(503)
      const text = await res.text()
      expect(Object.keys(JSON.parse(text) as object)).toEqual(['message'])
      expect(text).not.toMatch(/SQLITE|insert|select|\bat \w+ \(/i)
    }
    expect((await app.request('/healthz')).status).toBe(200)
    expect((await app.request(`/balance/user_id/${member.user_id}/summary`, {headers: AUTH})).status).toBe(200)

    await sql`pragma max_page_count = 1073741823`.execute(store.db)
    expect((await withdraw()).status).toBe(201)
    const accepted = answers.filter((res) => res.status === 201).length + 1
    const summary = (await (await app.request(`/balance/user_id/${member.user_id}/summary`, {headers: AUTH})).json()) as {available_funds: number}
    // Every acknowledged withdrawal is in the ledger, and no refused one is.
    expect(summary.available_funds).toBe(100000 - 10 * accepted)
  })
})
