import {sql} from 'kysely'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import type {AppError} from '../../../src/errors.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {findMemberBy} from '../../../src/registry/repository.js'
import type {MemberRow} from '../../../src/registry/tables.js'
import {openStore} from '../../../src/schema.js'
import type {Store} from '../../../src/store/db.js'
import {narrow} from '../../../src/store/database.js'
import {writeStats} from '../../../src/store/transactions.js'
import {tempDir} from '../../helpers/cli.js'
import {onPostgres} from '../../helpers/store.js'
import {PAYPAL_DETAILS, seedMember} from './setup.js'

/*
 * SQLite: the one writer decides withdrawals in its memory of the ledger (ledger.ts). Two handles
 * on one file stand for two `serve` processes: each has its own connection, writer and memory,
 * and each must see what the other committed before it decides.
 */
describe.skipIf(onPostgres)("the writer's memory of the ledger", () => {
  const open: Store[] = []
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close()
  })
  const clock = new ManualClock()
  // CHARITY has no minimum balance: every cent may go.
  const body = (amount: number) => ({type: 'CHARITY', amount, member_details: PAYPAL_DETAILS})

  async function twoHandles() {
    const file = join(tempDir(), 'ledger.db')
    const first = await openStore({file})
    const second = await openStore({file})
    open.push(first, second)
    const member = await seedMember(first.db, clock.now())
    const rowOn = async (store: Store) => (await findMemberBy(narrow(store.db), 'id', member.user_id)) as MemberRow
    return {first, second, rowOn}
  }
  /** A withdrawal's outcome: 201 made, 200 replayed, or the refusal's status and message. */
  const withdraw = (store: Store, row: MemberRow, amount: number, idempotencyKey?: string): Promise<{status: number; id?: string; message?: string}> =>
    balance.createWithdrawal(narrow(store.db), row, body(amount), {now: clock.now(), clientId: 'c', idempotencyKey}).then(
      (result) => ({status: result.replayed ? 200 : 201, id: result.created.transaction_id}),
      (error: unknown) => ({status: (error as AppError).status, message: (error as AppError).message}),
    )
  const funds = async (store: Store, row: MemberRow) => (await balance.getSummary(narrow(store.db), row)).available_funds.toString()

  it('decides on a credit another connection committed after its last batch', async () => {
    const {first, second, rowOn} = await twoHandles()
    const row = await rowOn(first)
    await balance.postCredit(narrow(first.db), row, {type: 'HONORARIUM', amount: '20'}, clock.now())
    expect(await withdraw(first, row, 10)).toMatchObject({status: 201})
    // The first writer now holds 10 in memory; the other connection adds 100.
    await balance.postCredit(narrow(second.db), await rowOn(second), {type: 'HONORARIUM', amount: '100'}, clock.now())
    expect(await withdraw(first, row, 105)).toMatchObject({status: 201})
    expect(await funds(first, row)).toBe('5')
  })

  it('never overdraws when both connections withdraw from one account at once', async () => {
    const {first, second, rowOn} = await twoHandles()
    const [a, b] = [await rowOn(first), await rowOn(second)]
    await balance.postCredit(narrow(first.db), a, {type: 'HONORARIUM', amount: '100'}, clock.now())
    // Warm both memories, then race: 30 × 7 asked of 99 left, from both sides in turn.
    expect(await withdraw(first, a, 0.5)).toMatchObject({status: 201})
    expect(await withdraw(second, b, 0.5)).toMatchObject({status: 201})
    const outcomes = await Promise.all(Array.from({length: 30}, (_, i) => withdraw(i % 2 ? first : second, i % 2 ? a : b, 7)))
    const granted = outcomes.filter((o) => o.status === 201).length
    expect(granted).toBe(14)
    expect(outcomes.filter((o) => o.status === 422).every((o) => /insufficient funds/.test(String(o.message)))).toBe(true)
    expect(await funds(first, a)).toBe('1')
    expect(await funds(second, b)).toBe('1')
  })

  it('takes an Idempotency-Key once across connections, and refuses it with another body', async () => {
    const {first, second, rowOn} = await twoHandles()
    const [a, b] = [await rowOn(first), await rowOn(second)]
    await balance.postCredit(narrow(first.db), a, {type: 'HONORARIUM', amount: '100'}, clock.now())
    const made = await withdraw(first, a, 10, 'key-1')
    expect(made).toMatchObject({status: 201})
    // The second connection's memory has never seen the key: it reads the store.
    expect(await withdraw(second, b, 10, 'key-1')).toEqual({status: 200, id: made.id})
    expect(await withdraw(second, b, 11, 'key-1')).toMatchObject({status: 422, message: expect.stringMatching(/Idempotency-Key/)})
    expect(await funds(second, b)).toBe('90')
  })

  it('refuses a withdrawal once a deactivation is written by any statement, even one that bypassed the writer', async () => {
    const file = join(tempDir(), 'plain.db')
    const store = await openStore({file})
    open.push(store)
    const member = await seedMember(store.db, clock.now())
    const row = (await findMemberBy(narrow(store.db), 'id', member.user_id)) as MemberRow
    await balance.postCredit(narrow(store.db), row, {type: 'HONORARIUM', amount: '100'}, clock.now())
    expect(await withdraw(store, row, 10)).toMatchObject({status: 201})
    await sql`update members set active = 0 where id = ${member.user_id}`.execute(store.db)
    expect(await withdraw(store, row, 10)).toMatchObject({status: 403})
    await sql`update members set active = 1 where id = ${member.user_id}`.execute(store.db)
    await sql`insert into withdrawal_restrictions (member_id, type, created_at) values (${member.user_id}, 'CHARITY', 'now')`.execute(store.db)
    expect(await withdraw(store, row, 10)).toMatchObject({status: 403, message: expect.stringMatching(/restricted/)})
  })

  it('decides a batch together: one transaction of the writer for the withdrawals that arrive at once', async () => {
    const {first, rowOn} = await twoHandles()
    const row = await rowOn(first)
    await balance.postCredit(narrow(first.db), row, {type: 'HONORARIUM', amount: '100'}, clock.now())
    const before = {...writeStats(first.db)}
    const outcomes = await Promise.all(Array.from({length: 40}, () => withdraw(first, row, 1)))
    expect(outcomes.every((o) => o.status === 201)).toBe(true)
    const stats = writeStats(first.db)
    expect(stats.writes - before.writes).toBe(40)
    expect(stats.commits - before.commits).toBeLessThanOrEqual(2)
    expect(await funds(first, row)).toBe('60')
  })
})
