import {createHash} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import {rejectionOf} from '../../helpers/rejection.js'
import {type LedgerContext, ledgerContext} from './setup.js'

/*
 * What the ledger keeps and shows beyond its arithmetic (ledger-boundaries.test.ts has that): the
 * request hash an Idempotency-Key is stored with, the messages that quote a caller's identifier,
 * what a stored row that cannot be read is called, and the fields of the views. Expected values
 * are written out. Found by mutation testing (docs/architecture.md, "Mutation testing").
 */

let ctx: LedgerContext

beforeEach(async () => {
  ctx = await ledgerContext()
})
afterEach(async () => ctx.store.close())

const message = async (promise: Promise<unknown>) => (await rejectionOf(promise, Error)).message

describe('the Idempotency-Key record', () => {
  it('hashes the member id and the body with its keys sorted, as every release since 0.1.0 has, so a key replays across an upgrade', async () => {
    await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '100'}, ctx.now())
    const body = {type: 'paypal', member_details: {last_name: 'Lovelace', first_name: 'Ada', email: 'ada@example.com'}, amount: '10'}
    await balance.createWithdrawal(ctx.db, {id: ctx.member.user_id}, body, {now: ctx.now(), clientId: 'balance-client', idempotencyKey: 'pin'})
    const stored = await ctx.db.selectFrom('balance_idempotency').select('request_hash').where('key', '=', 'pin').executeTakeFirstOrThrow()
    // The type as parsed (upper case), the amount as sent, every object's keys in code-point order.
    const text = `${ctx.member.user_id}\n{"amount":"10","member_details":{"email":"ada@example.com","first_name":"Ada","last_name":"Lovelace"},"type":"PAYPAL"}`
    expect(stored.request_hash).toBe(createHash('sha256').update(text).digest('hex'))
  })
})

describe('identifiers quoted in a refusal', () => {
  it('says a user_id is a positive integer when it has anything but digits, at either end', async () => {
    for (const id of ['12ab', 'ab12', '1 2'])
      expect(await message(balance.resolveAccountHolder(ctx.db, 'user_id', id))).toBe(`no account for user_id "${id}": a user_id is a positive integer`)
  })

  it('quotes an identifier of exactly 64 characters whole, and cuts one of 65', async () => {
    const digits = '9'.repeat(64)
    expect(await message(balance.resolveAccountHolder(ctx.db, 'user_id', digits))).toBe(`no account for user_id ${digits}`)
    expect(await message(balance.resolveAccountHolder(ctx.db, 'user_id', `${digits}9`))).toBe(`no account for user_id ${digits}…`)
    const id = 'x'.repeat(64)
    expect(await message(balance.getTransaction(ctx.db, id))).toBe(`no transaction with id "${id}"`)
    expect(await message(balance.getTransaction(ctx.db, `${id}x`))).toBe(`no transaction with id "${id}…"`)
  })

  it('gives an unknown account its own refusal reason', () => {
    expect(balance.refusalReason(new AppError('not_found', 'no account for user_id 7'))).toBe('unknown_account')
  })
})

describe('stored rows that cannot be read', () => {
  it('names the transaction whose properties are not JSON', async () => {
    const credit = await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '1'}, ctx.now())
    await ctx.db
      .updateTable('balance_transactions')
      .set({properties: '{' as never})
      .where('id', '=', credit.id)
      .execute()
    expect(await message(balance.getTransaction(ctx.db, credit.id))).toBe(`the store holds malformed JSON in the properties of transaction ${credit.id}`)
  })

  it('names the withdrawal type and the list that is not JSON', async () => {
    for (const column of ['required_fields', 'optional_fields', 'countries'] as const) {
      await ctx.store.close()
      ctx = await ledgerContext()
      await ctx.db
        .updateTable('withdrawal_types')
        .set({[column]: '[' as never})
        .where('code', '=', 'PAYPAL')
        .execute()
      const what = {required_fields: 'the required fields of PAYPAL', optional_fields: 'the optional fields of PAYPAL', countries: 'the countries of PAYPAL'}[column]
      const listing = column === 'countries' ? balance.listWithdrawalTypes(ctx.db, await ctx.row()) : balance.listWithdrawalTypes(ctx.db)
      expect(await message(listing)).toBe(`the store holds malformed JSON in ${what}`)
    }
  })
})

describe('the views', () => {
  it("shows a type's fee and minimum in their own currency", async () => {
    await ctx.db
      .updateTable('withdrawal_types')
      .set({fee_amount: '1.50', fee_currency: 'EUR', minimum_amount: '5.00', minimum_currency: 'GBP'})
      .where('code', '=', 'PAYPAL')
      .execute()
    const paypal = (await balance.listWithdrawalTypes(ctx.db)).find((type) => type.type === 'PAYPAL')!
    expect(paypal.fee?.currency).toBe('EUR')
    expect(paypal.fee?.amount.toFixed(2)).toBe('1.50')
    expect(paypal.minimum_balance_required?.currency).toBe('GBP')
    await ctx.db.updateTable('withdrawal_types').set({fee_currency: null}).where('code', '=', 'PAYPAL').execute()
    expect((await balance.listWithdrawalTypes(ctx.db)).find((type) => type.type === 'PAYPAL')!.fee?.currency).toBe('USD')
  })

  it('keeps a credit with a null survey id as having none', async () => {
    const credit = await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '1', survey_id: null}, ctx.now())
    expect(credit.survey_id).toBeNull()
    expect((await balance.getTransaction(ctx.db, credit.id)).survey_id).toBeNull()
  })
})

describe('withdrawals asked for at once', () => {
  // Started in one tick, so on PostgreSQL they are decided as one set (withdrawalRunner), where a
  // later withdrawal of the batch must see what the earlier ones took.
  const at = (body: Record<string, unknown>, idempotencyKey?: string) =>
    balance.createWithdrawal(ctx.db, {id: ctx.member.user_id}, body, {now: ctx.now(), clientId: 'balance-client', ...(idempotencyKey ? {idempotencyKey} : {})})
  const paypal = (amount: string) => ({type: 'PAYPAL', amount, member_details: {first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com'}})
  const funds = async () => (await balance.getSummary(ctx.db, await ctx.row())).available_funds.toFixed(2)

  it('grants of one account only what its funds cover, however many arrive together', async () => {
    await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '100'}, ctx.now())
    const outcomes = await Promise.allSettled(Array.from({length: 8}, () => at(paypal('30'))))
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3)
    for (const o of outcomes.filter((o) => o.status === 'rejected')) expect(balance.refusalReason((o as PromiseRejectedResult).reason)).toBe('insufficient_funds')
    expect(await funds()).toBe('10.00')
  })

  it('takes one Idempotency-Key once when it arrives several times together, and refuses it with another body', async () => {
    await balance.postCredit(ctx.db, await ctx.row(), {type: 'HONORARIUM', amount: '100'}, ctx.now())
    const same = await Promise.all(Array.from({length: 4}, () => at(paypal('10'), 'together')))
    expect(new Set(same.map((r) => r.created.transaction_id)).size).toBe(1)
    expect(same.map((r) => r.replayed).sort()).toEqual([false, true, true, true])
    expect(await funds()).toBe('90.00')
    const mixed = await Promise.allSettled([at(paypal('5'), 'mixed'), at(paypal('6'), 'mixed')])
    expect(mixed[0].status).toBe('fulfilled')
    expect(mixed[1].status === 'rejected' && balance.refusalReason(mixed[1].reason)).toBe('idempotency_conflict')
    expect(await funds()).toBe('85.00')
  })
})
