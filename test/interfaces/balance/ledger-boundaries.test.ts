import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import {findMemberBy} from '../../../src/registry/repository.js'
import {updateMember} from '../../../src/registry/service.js'
import {rejectionOf} from '../../helpers/rejection.js'
import {CHECK_DETAILS, type LedgerContext, ledgerContext, PAYPAL_DETAILS, seedMember} from './setup.js'

/*
 * The ledger's edges, as docs/balance.md states them: exact boundaries (a debit of all available
 * funds, a withdrawal that leaves exactly zero, a balance exactly at a type's minimum), the
 * messages a caller reads, and the account lookups. Amounts and messages are written out here.
 * Seeded types: PAYPAL has no fee and a 10.00 minimum, CHECK a 2.50 fee and a 25.00 minimum.
 */

let ctx: LedgerContext

beforeEach(async () => {
  ctx = await ledgerContext()
})
afterEach(async () => ctx.store.close())

const credit = async (amount: string, type = 'HONORARIUM') => balance.postCredit(ctx.db, await ctx.row(), {type, amount}, ctx.now())
const funds = async () => (await balance.getSummary(ctx.db, await ctx.row())).available_funds.toFixed(2)
const withdraw = async (body: Record<string, unknown>, options: Partial<balance.WithdrawalOptions> = {}) =>
  balance.createWithdrawal(ctx.db, {id: ctx.member.user_id}, body, {now: ctx.now(), clientId: 'balance-client', ...options})
/** What a promise was refused with: its code and message. */
const refusal = async (promise: Promise<unknown>) => {
  const error = await rejectionOf(promise, AppError)
  return {code: error.code, message: error.message, reason: balance.refusalReason(error)}
}

describe('credits and debits', () => {
  it('reads a member with no history as 0 USD, not preferred', async () => {
    expect(await balance.getSummary(ctx.db, await ctx.row())).toEqual({available_funds: expect.anything(), currency: 'USD', preferred_status: false})
    expect(await funds()).toBe('0.00')
    expect(await balance.listTransactions(ctx.db, await ctx.row())).toEqual([])
  })

  it('takes a credit type in any case and shows credits positive, debits negative', async () => {
    const c = await credit('12.34', 'honorarium')
    expect(c).toMatchObject({type: 'HONORARIUM', status: 'Completed', currency: 'USD', survey_id: null, properties: {}})
    expect(c.amount.toFixed(2)).toBe('12.34')
    const d = await balance.postDebit(ctx.db, await ctx.row(), {amount: '2.34', properties: {reason: 'correction'}}, ctx.now())
    expect(d).toMatchObject({type: 'DEBIT_ADJUSTMENT', status: 'Completed', properties: {reason: 'correction'}})
    expect(d.amount.toFixed(2)).toBe('-2.34')
    const list = await balance.listTransactions(ctx.db, await ctx.row())
    expect(list.map((t) => [t.type, t.amount.toFixed(2), t.current_balance.toFixed(2)])).toEqual([
      ['HONORARIUM', '12.34', '12.34'],
      ['DEBIT_ADJUSTMENT', '-2.34', '10.00'],
    ])
    expect(await funds()).toBe('10.00')
    expect(await balance.getTransaction(ctx.db, d.id)).toMatchObject({id: d.id, type: 'DEBIT_ADJUSTMENT', properties: {reason: 'correction'}})
  })

  it('refuses an unknown credit type, naming the ones there are', async () => {
    expect(await refusal(credit('1', 'BONUS'))).toMatchObject({code: 'bad_request', message: expect.stringMatching(/^type: must be one of HONORARIUM, .*\(any case\)$/)})
    expect(await funds()).toBe('0.00')
  })

  it('keeps a survey id trimmed, and refuses an empty one or one over 100 characters', async () => {
    const trimmed = await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '1', survey_id: '  S-1  '}, ctx.now())
    expect(trimmed.survey_id).toBe('S-1')
    const longest = await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '1', survey_id: 'x'.repeat(100)}, ctx.now())
    expect(longest.survey_id).toHaveLength(100)
    for (const survey_id of ['', '   ', 'x'.repeat(101)]) {
      expect(await refusal(balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '1', survey_id}, ctx.now()))).toMatchObject({
        code: 'bad_request',
        message: 'survey_id: must be 1 to 100 characters',
      })
    }
    expect(await funds()).toBe('2.00')
  })

  it('lets a debit take all available funds, and not a cent more', async () => {
    expect(await refusal(balance.postDebit(ctx.db, await ctx.row(), {amount: '0.01'}, ctx.now()))).toEqual({
      code: 'unprocessable',
      message: 'insufficient funds: a debit of 0.01 exceeds available funds of 0 USD',
      reason: 'invalid',
    })
    await credit('5.00')
    expect(await refusal(balance.postDebit(ctx.db, await ctx.row(), {amount: '5.01'}, ctx.now()))).toMatchObject({
      message: 'insufficient funds: a debit of 5.01 exceeds available funds of 5 USD',
    })
    await balance.postDebit(ctx.db, await ctx.row(), {amount: '5.00'}, ctx.now())
    expect(await funds()).toBe('0.00')
  })
})

describe('withdrawals', () => {
  it('grants one that leaves exactly zero, fee included, and writes the withdrawal and its fee', async () => {
    await credit('30.00')
    const {created, replayed} = await withdraw({type: 'CHECK', amount: '27.50', member_details: CHECK_DETAILS})
    expect(replayed).toBe(false)
    expect(created.uri).toBe(`/balance/transactions/${created.transaction_id}`)
    expect(await funds()).toBe('0.00')
    const list = await balance.listTransactions(ctx.db, await ctx.row())
    expect(list.map((t) => [t.type, t.status, t.amount.toFixed(2), t.current_balance.toFixed(2)])).toEqual([
      ['HONORARIUM', 'Completed', '30.00', '30.00'],
      ['WITHDRAWAL', 'Processing', '-27.50', '2.50'],
      ['WITHDRAWAL_FEE', 'Processing', '-2.50', '0.00'],
    ])
    expect(list[1]!.properties).toEqual({withdrawal_type: 'CHECK', vendor: expect.any(String)})
    expect(list[2]!.properties).toEqual({withdrawal_type: 'CHECK', withdrawal_id: created.transaction_id})
  })

  it('names the fee when amount and fee exceed the funds, and only the amount when there is no fee', async () => {
    await credit('30.00')
    expect(await refusal(withdraw({type: 'CHECK', amount: '27.51', member_details: CHECK_DETAILS}))).toEqual({
      code: 'unprocessable',
      message: 'insufficient funds: amount 27.51 plus the CHECK fee of 2.5 exceeds available funds of 30 USD',
      reason: 'insufficient_funds',
    })
    expect(await refusal(withdraw({type: 'PAYPAL', amount: '30.01', member_details: PAYPAL_DETAILS}))).toEqual({
      code: 'unprocessable',
      message: 'insufficient funds: amount 30.01 exceeds available funds of 30 USD',
      reason: 'insufficient_funds',
    })
    expect(await funds()).toBe('30.00')
  })

  it("allows a withdrawal at exactly the type's minimum balance, and refuses one a cent below it", async () => {
    await credit('9.99')
    expect(await refusal(withdraw({type: 'PAYPAL', amount: '1', member_details: PAYPAL_DETAILS}))).toEqual({
      code: 'unprocessable',
      message: 'available funds of 9.99 USD are below the minimum balance of 10 required for PAYPAL',
      reason: 'below_minimum',
    })
    await credit('0.01')
    await withdraw({type: 'PAYPAL', amount: '10', member_details: PAYPAL_DETAILS})
    expect(await funds()).toBe('0.00')
  })

  it('refuses, with its reason, an inactive member, an unknown type and a restricted type', async () => {
    await credit('100')
    expect(await refusal(withdraw({type: 'BITCOIN', amount: '1', member_details: PAYPAL_DETAILS}))).toMatchObject({
      code: 'unprocessable',
      reason: 'unknown_type',
      message: 'type: "BITCOIN" is not a withdrawal type; list them with GET …/withdrawal_types',
    })
    await balance.restrictWithdrawalType(ctx.db, await ctx.row(), 'paypal', false, ctx.now())
    expect(await refusal(withdraw({type: 'PAYPAL', amount: '1', member_details: PAYPAL_DETAILS}))).toMatchObject({
      code: 'forbidden',
      reason: 'restricted',
      message: 'withdrawal type PAYPAL is restricted for this person',
    })
    await updateMember(ctx.db, ctx.member.user_id, {active: false}, ctx.now())
    expect(await refusal(withdraw({type: 'CHECK', amount: '1', member_details: CHECK_DETAILS}))).toMatchObject({code: 'forbidden', reason: 'inactive_member'})
    expect(await funds()).toBe('100.00')
  })

  it('refuses a type not offered in the member’s country, naming the country', async () => {
    const abroad = await seedMember(ctx.db, ctx.now(), {country: 'DE'})
    const abroadRow = (await findMemberBy(ctx.db, 'id', abroad.user_id))!
    await balance.postCredit(ctx.db, abroadRow, {type: 'HONORARIUM', amount: '100'}, ctx.now())
    expect(await refusal(balance.createWithdrawal(ctx.db, {id: abroad.user_id}, {type: 'ACH', amount: '1', member_details: {}}, {now: ctx.now()}))).toMatchObject({
      code: 'forbidden',
      reason: 'restricted',
      message: 'withdrawal type ACH is not offered to members practising in DE',
    })
    const offered = (await balance.listWithdrawalTypes(ctx.db, abroadRow)).map((t) => t.type)
    expect(offered).not.toContain('ACH')
    expect((await balance.listWithdrawalTypes(ctx.db)).map((t) => t.type)).toContain('ACH')
  })

  it('replays an Idempotency-Key whatever the order of the body’s keys, and only for the same client', async () => {
    await credit('100')
    const first = await withdraw({type: 'PAYPAL', amount: '10', member_details: PAYPAL_DETAILS}, {idempotencyKey: 'k1'})
    const reordered = {member_details: {email: PAYPAL_DETAILS.email, last_name: PAYPAL_DETAILS.last_name, first_name: PAYPAL_DETAILS.first_name}, amount: '10', type: 'PAYPAL'}
    const again = await withdraw(reordered, {idempotencyKey: 'k1'})
    expect(again).toEqual({created: first.created, replayed: true})
    expect(await funds()).toBe('90.00')
    // The same key with another body is a conflict.
    expect(await refusal(withdraw({type: 'PAYPAL', amount: '11', member_details: PAYPAL_DETAILS}, {idempotencyKey: 'k1'}))).toMatchObject({
      code: 'unprocessable',
      reason: 'idempotency_conflict',
      message: 'Idempotency-Key: this key was already used for a different request',
    })
    // Another client's key of the same name is its own; the CLI (no client) never replays.
    expect((await withdraw({type: 'PAYPAL', amount: '10', member_details: PAYPAL_DETAILS}, {idempotencyKey: 'k1', clientId: 'other-client'})).replayed).toBe(false)
    expect((await withdraw({type: 'PAYPAL', amount: '10', member_details: PAYPAL_DETAILS}, {idempotencyKey: 'k1', clientId: null})).replayed).toBe(false)
    expect(await funds()).toBe('70.00')
  })

  it('gives no refusal reason to what is no refusal', () => {
    expect(balance.refusalReason(new Error('disk full'))).toBeUndefined()
    expect(balance.refusalReason(new AppError('internal', 'store failed'))).toBeUndefined()
    expect(balance.refusalReason(new AppError('bad_request', 'amount: required'))).toBe('invalid')
  })
})

describe('status moves', () => {
  it('takes a status in any case and says what a transaction can become', async () => {
    await credit('100')
    const {created} = await withdraw({type: 'PAYPAL', amount: '10', member_details: PAYPAL_DETAILS})
    const id = created.transaction_id
    expect(await refusal(balance.updateTransactionStatus(ctx.db, id, 'Reversed', ctx.now()))).toMatchObject({
      code: 'unprocessable',
      message: 'a Processing transaction cannot become Reversed (it can become Completed or Cancelled or OnHold)',
    })
    expect(await refusal(balance.updateTransactionStatus(ctx.db, id, 'paid', ctx.now()))).toMatchObject({
      code: 'bad_request',
      message: 'status: must be one of Processing, Completed, Cancelled, Reversed, OnHold (any case)',
    })
    // Any case, and the id in upper case with spaces around it.
    const moved = await balance.updateTransactionStatus(ctx.db, `  ${id.toUpperCase()} `, 'cancelled', ctx.now())
    expect(moved).toMatchObject({id, status: 'Cancelled'})
    expect(await funds()).toBe('100.00')
    expect(await refusal(balance.updateTransactionStatus(ctx.db, id, 'Completed', ctx.now()))).toMatchObject({
      message: 'a Cancelled transaction cannot become Completed (that status is final)',
    })
  })

  it('names the withdrawal to change when asked to move a fee', async () => {
    await credit('100')
    const {created} = await withdraw({type: 'CHECK', amount: '10', member_details: CHECK_DETAILS})
    const fee = (await balance.listTransactions(ctx.db, await ctx.row())).at(-1)!
    expect(await refusal(balance.updateTransactionStatus(ctx.db, fee.id, 'Cancelled', ctx.now()))).toMatchObject({
      code: 'unprocessable',
      message: `a withdrawal fee follows its withdrawal; change ${created.transaction_id} instead`,
    })
  })

  it('moves a fee with its withdrawal, so cancelling refunds both; a withdrawal with no fee writes none', async () => {
    await credit('100')
    const {created} = await withdraw({type: 'CHECK', amount: '10', member_details: CHECK_DETAILS})
    expect(await funds()).toBe('87.50')
    await balance.updateTransactionStatus(ctx.db, created.transaction_id, 'Cancelled', ctx.now())
    expect(await funds()).toBe('100.00')
    const statuses = (await balance.listTransactions(ctx.db, await ctx.row())).map((t) => [t.type, t.status])
    expect(statuses).toEqual([
      ['HONORARIUM', 'Completed'],
      ['WITHDRAWAL', 'Cancelled'],
      ['WITHDRAWAL_FEE', 'Cancelled'],
    ])
    await withdraw({type: 'PAYPAL', amount: '10', member_details: PAYPAL_DETAILS})
    expect((await balance.listTransactions(ctx.db, await ctx.row())).map((t) => t.type)).toEqual(['HONORARIUM', 'WITHDRAWAL', 'WITHDRAWAL_FEE', 'WITHDRAWAL'])
  })

  it('refuses a move that would overdraw, saying to what, and changes nothing', async () => {
    const c = await credit('50')
    await withdraw({type: 'PAYPAL', amount: '45.5', member_details: PAYPAL_DETAILS})
    expect(await refusal(balance.updateTransactionStatus(ctx.db, c.id, 'Reversed', ctx.now()))).toMatchObject({
      code: 'unprocessable',
      message: 'this would take available funds to -45.5 USD; the account may not go below zero',
    })
    expect(await funds()).toBe('4.50')
    expect((await balance.getTransaction(ctx.db, c.id)).status).toBe('Completed')
  })

  it('lets a credit be reversed when that leaves exactly zero', async () => {
    const c = await credit('20')
    expect((await balance.updateTransactionStatus(ctx.db, c.id, 'Reversed', ctx.now())).status).toBe('Reversed')
    expect(await funds()).toBe('0.00')
  })

  it('answers 404 for an unknown or malformed transaction id, quoting it short', async () => {
    const unknown = '0190f3c4-0000-7000-8000-000000000000'
    expect(await refusal(balance.getTransaction(ctx.db, unknown))).toMatchObject({code: 'not_found', message: `no transaction with id "${unknown}"`})
    expect(await refusal(balance.updateTransactionStatus(ctx.db, 'nope', 'Cancelled', ctx.now()))).toMatchObject({code: 'not_found', message: 'no transaction with id "nope"'})
    expect(await refusal(balance.getTransaction(ctx.db, 'x'.repeat(70)))).toMatchObject({message: `no transaction with id "${'x'.repeat(64)}…"`})
  })
})

describe('account holders and settings', () => {
  it('finds each person by user_id, npi and me, trimmed, and tells them apart', async () => {
    const other = await seedMember(ctx.db, ctx.now())
    for (const m of [ctx.member, other]) {
      const r = (await findMemberBy(ctx.db, 'id', m.user_id))!
      expect((await balance.resolveAccountHolder(ctx.db, 'user_id', ` ${m.user_id} `)).id).toBe(m.user_id)
      expect((await balance.resolveAccountHolder(ctx.db, 'npi', ` ${r.npi} `)).id).toBe(m.user_id)
      expect((await balance.resolveAccountHolder(ctx.db, 'me', String(r.me))).id).toBe(m.user_id)
    }
  })

  it('answers 404 with the reason for each kind of bad identifier', async () => {
    const notFound = async (key: string, id: string) => (await refusal(balance.resolveAccountHolder(ctx.db, key, id))).message
    expect(await notFound('partner_id', '1')).toBe('"partner_id" is not an account key; use user_id, npi or me')
    expect(await notFound('user_id', 'abc')).toBe('no account for user_id "abc": a user_id is a positive integer')
    expect(await notFound('user_id', '9'.repeat(70))).toBe(`no account for user_id ${'9'.repeat(64)}…`)
    expect(await notFound('user_id', '99999999999999999999')).toBe('no account for user_id 99999999999999999999')
    expect(await notFound('user_id', '999999')).toBe('no account for user_id 999999')
    expect(await notFound('npi', '1234567890')).toBe('no account for npi "1234567890": not a valid NPI (10 digits ending in a Luhn check digit)')
    expect(await notFound('me', '123456789')).toBe('no account for me "123456789": an AMA ME number is 10 or 11 digits')
    expect(await notFound('me', '123456789012')).toBe('no account for me "123456789012": an AMA ME number is 10 or 11 digits')
    expect(await notFound('me', '12345678901')).toBe('no account for me 12345678901')
    expect(await notFound('me', '1234567890')).toBe('no account for me 1234567890')
  })

  it('restricts and lifts a type by its code in any case, and refuses a type that does not exist', async () => {
    expect(await balance.restrictWithdrawalType(ctx.db, await ctx.row(), ' check ', false, ctx.now())).toEqual({
      user_id: ctx.member.user_id,
      type: 'CHECK',
      restricted: true,
      restricted_types: ['CHECK'],
    })
    expect((await balance.listWithdrawalTypes(ctx.db, await ctx.row())).map((t) => t.type)).not.toContain('CHECK')
    expect(await balance.restrictWithdrawalType(ctx.db, await ctx.row(), 'CHECK', true, ctx.now())).toMatchObject({restricted: false, restricted_types: []})
    expect(await refusal(balance.restrictWithdrawalType(ctx.db, await ctx.row(), 'BITCOIN', false, ctx.now()))).toMatchObject({
      code: 'bad_request',
      message: expect.stringMatching(/^type: "BITCOIN" is not a withdrawal type \(one of [A-Z_]+(, [A-Z_]+)+\)$/),
    })
  })

  it('sets and clears preferred status', async () => {
    expect((await balance.setPreferredStatus(ctx.db, await ctx.row(), true, ctx.now())).preferred_status).toBe(true)
    expect((await balance.getSummary(ctx.db, await ctx.row())).preferred_status).toBe(true)
    expect((await balance.setPreferredStatus(ctx.db, await ctx.row(), false, ctx.now())).preferred_status).toBe(false)
  })
})
