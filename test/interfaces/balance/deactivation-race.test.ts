import {sql} from 'kysely'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import {findMemberBy} from '../../../src/registry/repository.js'
import {updateMember} from '../../../src/registry/service.js'
import {writeTransaction} from '../../../src/store/transactions.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {AUTH, PAYPAL_DETAILS, seedClients, seedMember} from './setup.js'

/*
 * A withdrawal decides on the member row it reads inside its own write transaction, after the
 * account lock, never on a row the route resolved earlier: a deactivation (what
 * `update-member --deactivate` runs) that commits before the withdrawal's transaction refuses it.
 */
describe('a deactivation racing withdrawals', () => {
  let ctx: TestContext
  let member: Awaited<ReturnType<typeof seedMember>>

  beforeEach(async () => {
    ctx = await freshApp()
    await seedClients(ctx.store, ctx.clock.now())
    member = await seedMember(ctx.db, ctx.clock.now())
    const row = (await findMemberBy(ctx.db, 'id', member.user_id))!
    await balance.postCredit(ctx.db, row, {type: 'HONORARIUM', amount: '1000'}, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const body = {type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}

  it('refuses a withdrawal handed a row read before the deactivation committed', async () => {
    // What a route holds between resolving the account holder and the withdrawal's transaction.
    const stale = (await findMemberBy(ctx.db, 'id', member.user_id))!
    expect(stale.active).toBe(1)
    await updateMember(ctx.db, member.user_id, {active: false}, ctx.clock.now())
    const refused = await balance.createWithdrawal(ctx.db, stale, body, {now: ctx.clock.now()}).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AppError)
    expect((refused as AppError).status).toBe(403)
    expect((refused as AppError).message).toMatch(/inactive/)
    const summary = await balance.getSummary(ctx.db, stale)
    expect(summary.available_funds.toString()).toBe('1000')
  })

  it('commits no withdrawal after the deactivation in a stream of concurrent ones', async () => {
    const post = () =>
      ctx.app.request(`/balance/user_id/${member.user_id}/withdrawals`, {
        method: 'POST',
        headers: {...AUTH, 'content-type': 'application/json'},
        body: JSON.stringify(body),
      })
    // The last ledger position when the deactivation took effect, read in its own transaction
    // right after it: a withdrawal stored after that position committed after the deactivation.
    let marker: number | undefined
    const deactivate = async () =>
      writeTransaction(
        ctx.db,
        async (trx) => {
          await updateMember(trx, member.user_id, {active: false}, ctx.clock.now())
          const {rows} = await sql<{seq: number | string | null}>`select max(seq) as seq from balance_transactions`.execute(trx)
          marker = Number(rows[0]?.seq ?? 0)
        },
        {isolation: 'read committed'},
      )
    const before = Array.from({length: 15}, post)
    // Let the first ones resolve the account holder (and warm its cache) before the deactivation.
    await new Promise((resolve) => setTimeout(resolve, 0))
    const deactivated = deactivate()
    const after = Array.from({length: 25}, post)
    const responses = await Promise.all([...before, ...after])
    await deactivated
    expect(marker).toBeDefined()

    const statuses = responses.map((res) => res.status)
    expect(
      statuses.every((status) => status === 201 || status === 403),
      String(statuses),
    ).toBe(true)
    const rows = await ctx.db.selectFrom('balance_transactions').select(['seq', 'type']).where('member_id', '=', member.user_id).where('type', '=', 'WITHDRAWAL').execute()
    expect(rows.length).toBe(statuses.filter((status) => status === 201).length)
    const late = rows.filter((row) => Number(row.seq) > marker!)
    expect(late, `withdrawals stored after the deactivation (position ${marker})`).toEqual([])
    // The requests sent after it had resolved the member as active before it committed.
    expect(statuses.filter((status) => status === 403).length).toBeGreaterThan(0)
    // Nothing after the deactivation either, whatever was in flight.
    const refused = await post()
    expect(refused.status).toBe(403)
  })
})
