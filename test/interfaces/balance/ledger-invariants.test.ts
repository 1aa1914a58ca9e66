import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import * as decide from '../../../src/interfaces/balance/decide.js'
import {assertWithdrawalWrite, FEE_LINE, FUNDS_FOLLOW_LINES, LedgerInvariantError, NO_NEGATIVE_FUNDS, type WithdrawalLines} from '../../../src/interfaces/balance/invariants.js'
import * as repo from '../../../src/interfaces/balance/repository.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import type {NewTransactionRow} from '../../../src/interfaces/balance/tables.js'
import {writeTransaction} from '../../../src/store/transactions.js'
import {toJsonText} from '../../../src/store/json.js'
import {rejectionOf} from '../../helpers/rejection.js'
import {AUTH, CHECK_DETAILS, type LedgerContext, ledgerContext, seedClients} from './setup.js'

/*
 * The ledger's invariants (src/interfaces/balance/invariants.ts): no negative available funds,
 * and the fee line beside every withdrawal whose type charges one (CHECK). No caller can break them
 * (the rules refuse first), so these tests craft the broken decision themselves and check that it
 * fails loudly, and that through the app it is refused whole: a 500 in C's shape, a log line
 * naming the invariant, and nothing written.
 */

// A switch for the app test: when set, the decision's fee line is dropped after it was decided.
const tamper = vi.hoisted(() => ({dropFeeLine: false}))
vi.mock('../../../src/interfaces/balance/decide.js', async (original) => {
  const real = await original<typeof import('../../../src/interfaces/balance/decide.js')>()
  return {
    ...real,
    decideWithdrawal: (...args: Parameters<typeof real.decideWithdrawal>) => {
      const decision = real.decideWithdrawal(...args)
      if (tamper.dropFeeLine && decision.write) decision.write.rows = decision.write.rows.slice(0, 1)
      return decision
    },
  }
})

const line = (overrides: Partial<NewTransactionRow>): NewTransactionRow => ({
  id: 'w-1',
  member_id: 1,
  type: 'WITHDRAWAL',
  amount: '40',
  currency: 'USD',
  status: 'Processing',
  survey_id: null,
  properties: toJsonText({}),
  withdrawal_id: null,
  withdrawal_type: 'CHECK',
  member_details: toJsonText({}),
  client_id: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...overrides,
})
const feeLine = line({id: 'f-1', type: 'WITHDRAWAL_FEE', amount: '2.5', withdrawal_id: 'w-1', member_details: null})
const CHECK_WRITE: WithdrawalLines = {rows: [line({}), feeLine], memberId: 1, before: '100', available: '57.5', fee: '2.5'}

const brokenInvariant = (write: WithdrawalLines): string | undefined => {
  try {
    assertWithdrawalWrite(write)
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(LedgerInvariantError)
    return (error as LedgerInvariantError).invariant
  }
}

describe('assertWithdrawalWrite', () => {
  it('passes a CHECK withdrawal with its fee line, and a fee-less type without one', () => {
    expect(brokenInvariant(CHECK_WRITE)).toBeUndefined()
    expect(brokenInvariant({rows: [line({withdrawal_type: 'PAYPAL'})], memberId: 1, before: '40', available: '0', fee: '0'})).toBeUndefined()
  })

  it('refuses a CHECK withdrawal without its fee line, with one too many, or with a line for another withdrawal', () => {
    expect(brokenInvariant({...CHECK_WRITE, rows: [line({})], available: '60'})).toBe(FEE_LINE)
    expect(brokenInvariant({...CHECK_WRITE, rows: [line({}), feeLine, {...feeLine, id: 'f-2'}], available: '55'})).toBe(FEE_LINE)
    expect(brokenInvariant({...CHECK_WRITE, rows: [line({}), {...feeLine, withdrawal_id: 'w-other'}]})).toBe(FEE_LINE)
    expect(brokenInvariant({...CHECK_WRITE, rows: [line({}), {...feeLine, amount: '2'}], available: '58'})).toBe(FEE_LINE)
    expect(brokenInvariant({...CHECK_WRITE, rows: [feeLine]})).toBe(FEE_LINE)
  })

  it('refuses funds that do not move by the lines, and funds below zero', () => {
    expect(brokenInvariant({...CHECK_WRITE, available: '60'})).toBe(FUNDS_FOLLOW_LINES)
    expect(brokenInvariant({...CHECK_WRITE, before: '40', available: '-2.5'})).toBe(NO_NEGATIVE_FUNDS)
  })

  it('refuses a write that does not start with its withdrawal, even one whose lines otherwise add up, and an empty one', () => {
    expect(brokenInvariant({rows: [line({type: 'HONORARIUM', withdrawal_type: 'PAYPAL'})], memberId: 1, before: '40', available: '0', fee: '0'})).toBe(FEE_LINE)
    expect(brokenInvariant({rows: [], memberId: 1, before: '40', available: '40', fee: '0'})).toBe(FEE_LINE)
  })

  it('refuses a fee line of another type, even one for the right withdrawal and amount', () => {
    expect(brokenInvariant({...CHECK_WRITE, rows: [line({}), {...feeLine, type: 'DEBIT_ADJUSTMENT'}]})).toBe(FEE_LINE)
  })

  it('says which invariant and what broke it, by name', () => {
    const messageOf = (write: WithdrawalLines) => {
      try {
        assertWithdrawalWrite(write)
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`
      }
      return 'kept'
    }
    expect(messageOf({...CHECK_WRITE, rows: [feeLine]})).toBe(
      'LedgerInvariantError: ledger invariant broken, the fee line beside its withdrawal: a write for member 1 does not start with its withdrawal',
    )
    expect(messageOf({...CHECK_WRITE, rows: [line({})], available: '60'})).toBe(
      'LedgerInvariantError: ledger invariant broken, the fee line beside its withdrawal: withdrawal w-1 charges a fee of 2.5 but is written with 0 fee line(s)',
    )
    expect(messageOf({...CHECK_WRITE, available: '60'})).toBe(
      'LedgerInvariantError: ledger invariant broken, available funds move by the lines written: withdrawal w-1 takes 42.5 from 100 but leaves 60',
    )
    expect(messageOf({...CHECK_WRITE, before: '40', available: '-2.5'})).toBe(
      'LedgerInvariantError: ledger invariant broken, no negative available funds: member 1 would have -2.5',
    )
  })
})

describe('the ledger refuses a broken write', () => {
  let ctx: LedgerContext

  beforeEach(async () => {
    ctx = await ledgerContext()
    await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '100'}, ctx.now())
  })
  afterEach(async () => {
    tamper.dropFeeLine = false
    await ctx.store.close()
  })

  const unchanged = async () => {
    expect((await balance.getSummary(ctx.db, await ctx.row())).available_funds.toString()).toBe('100')
    expect((await balance.listTransactions(ctx.db, await ctx.row())).map((t) => t.type)).toEqual(['HONORARIUM'])
  }

  it('throws from the writer for a crafted decision, and the transaction writes nothing', async () => {
    const memberId = ctx.member.user_id
    const rows = CHECK_WRITE.rows.map((row) => ({...row, member_id: memberId}))
    const crafted: repo.WithdrawalWrite = {...CHECK_WRITE, memberId, rows: rows.slice(0, 1), available: '57.5', stamp: ctx.now().toISOString()}
    const error = await rejectionOf(
      writeTransaction(ctx.db, (trx) => repo.recordWithdrawal(trx, crafted)),
      LedgerInvariantError,
    )
    expect(error.invariant).toBe(FEE_LINE)
    await unchanged()
    const negative = await rejectionOf(
      writeTransaction(ctx.db, (trx) => repo.setAvailableFunds(trx, memberId, '-0.01', ctx.now().toISOString())),
      LedgerInvariantError,
    )
    expect(negative.invariant).toBe(NO_NEGATIVE_FUNDS)
    await unchanged()
  })

  it('answers a 500 in C shape through the app, logs which invariant, and writes nothing', async () => {
    await seedClients(ctx.store, ctx.now())
    tamper.dropFeeLine = true
    const res = await ctx.app.request(`/balance/user_id/${ctx.member.user_id}/withdrawals`, {
      method: 'POST',
      headers: {...AUTH, 'content-type': 'application/json'},
      body: JSON.stringify({type: 'CHECK', amount: 40, member_details: CHECK_DETAILS}),
    })
    expect(res.status).toBe(500)
    const body = (await res.json()) as Record<string, unknown>
    expect(Object.keys(body)).toEqual(['message'])
    expect(String(body.message)).not.toContain('invariant')
    const errors = ctx.logs.filter((entry) => entry.startsWith('error'))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain(`ledger invariant broken, ${FEE_LINE}`)
    await unchanged()
    // The same request, decided as it should be, goes through.
    tamper.dropFeeLine = false
    expect(decide.decideWithdrawal).toBeTypeOf('function')
    const again = await ctx.app.request(`/balance/user_id/${ctx.member.user_id}/withdrawals`, {
      method: 'POST',
      headers: {...AUTH, 'content-type': 'application/json'},
      body: JSON.stringify({type: 'CHECK', amount: 40, member_details: CHECK_DETAILS}),
    })
    expect(again.status).toBe(201)
    expect((await balance.getSummary(ctx.db, await ctx.row())).available_funds.toString()).toBe('57.5')
  })
})
