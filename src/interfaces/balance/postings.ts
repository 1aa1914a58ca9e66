import type {Kysely} from 'kysely'
import {AppError, notFound} from '../../errors.js'
import {iso} from '../../lib/clock.js'
import {canonical as canonicalEnum} from '../../lib/enums.js'
import {newTimeOrderedUuid} from '../../lib/ids.js'
import type {MemberRow} from '../../registry/tables.js'
import type {BalanceView as Database} from './tables.js'
import {writeTransaction} from '../../store/transactions.js'
import {toJsonText} from '../../store/json.js'
import {amountText, DEFAULT_CURRENCY, Money, parseAmount, ZERO} from './money.js'
import {findTransactionById, getSummary} from './queries.js'
import * as repo from './repository.js'
import {CREDIT_TYPES, type CreditType, parseProperties, STATUSES, type TransactionStatus, TRANSITIONS} from './schema.js'
import type {TransactionRow} from './tables.js'
import {type AccountSummary, effect, shown, type TransactionView, transactionView} from './views.js'

/*
 * The ledger's writes other than a withdrawal: credits, correcting debits, status moves,
 * restrictions and the preferred flag. Each runs in one write transaction.
 */

export interface CreditInput {
  type: string
  amount: unknown
  survey_id?: string | null | undefined
  properties?: Record<string, unknown> | undefined
}

function parseSurveyId(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null
  const trimmed = value.trim()
  if (!trimmed || trimmed.length > 100) throw new AppError('bad_request', 'survey_id: must be 1 to 100 characters')
  return trimmed
}

/** Posts a Completed credit (available at once) and returns it. */
export async function postCredit(db: Kysely<Database>, member: MemberRow, input: CreditInput, now: Date): Promise<TransactionView> {
  const creditType = canonicalEnum(input.type, CREDIT_TYPES)
  if (!creditType) throw new AppError('bad_request', `type: must be one of ${CREDIT_TYPES.join(', ')} (any case)`)
  const properties = parseProperties(input.properties)
  const surveyId = parseSurveyId(input.survey_id)
  return writeTransaction(db, async (trx) => {
    const stamp = iso(now)
    const account = await repo.ensureAccount(trx, member.id, DEFAULT_CURRENCY, stamp)
    const amount = parseAmount(input.amount, account.currency)
    const funds = new Money(account.available_funds).plus(amount)
    return postCompleted(trx, member, {type: creditType, amount, currency: account.currency, surveyId, properties}, funds, stamp)
  })
}

interface Completed {
  type: CreditType | 'DEBIT_ADJUSTMENT'
  amount: Money
  currency: string
  surveyId: string | null
  properties: Record<string, string>
}

/** Writes a Completed credit or debit and the account's new available funds, in the caller's transaction. */
async function postCompleted(trx: Kysely<Database>, member: MemberRow, tx: Completed, funds: Money, stamp: string): Promise<TransactionView> {
  const id = newTimeOrderedUuid()
  await repo.insertTransaction(trx, {
    id,
    member_id: member.id,
    type: tx.type,
    amount: amountText(tx.amount),
    currency: tx.currency,
    status: 'Completed',
    survey_id: tx.surveyId,
    properties: toJsonText(tx.properties),
    withdrawal_id: null,
    withdrawal_type: null,
    member_details: null,
    client_id: null,
    created_at: stamp,
    updated_at: stamp,
  })
  await repo.setAvailableFunds(trx, member.id, amountText(funds), stamp)
  return transactionView((await repo.findTransaction(trx, id))!)
}

/** Posts a Completed DEBIT_ADJUSTMENT; refused when it would take the account below zero. */
export async function postDebit(
  db: Kysely<Database>,
  member: MemberRow,
  input: {amount: unknown; properties?: Record<string, unknown> | undefined},
  now: Date,
): Promise<TransactionView> {
  const properties = parseProperties(input.properties)
  return writeTransaction(db, async (trx) => {
    const stamp = iso(now)
    const account = await repo.findAccount(trx, member.id)
    const currency = account?.currency ?? DEFAULT_CURRENCY
    const amount = parseAmount(input.amount, currency)
    const available = new Money(account?.available_funds ?? '0')
    if (amount.gt(available))
      throw new AppError('unprocessable', `insufficient funds: a debit of ${amountText(amount)} exceeds available funds of ${amountText(available)} ${currency}`)
    if (!account) await repo.ensureAccount(trx, member.id, currency, stamp)
    return postCompleted(trx, member, {type: 'DEBIT_ADJUSTMENT', amount, currency, surveyId: null, properties}, available.minus(amount), stamp)
  })
}

/**
 * Moves a transaction along the status graph (TRANSITIONS in schema.ts; docs/balance.md). A withdrawal's fee moves with it (so a
 * cancelled or reversed withdrawal refunds its fee); a change that would leave the account
 * below zero (reversing a credit already spent) is refused.
 */
export async function updateTransactionStatus(db: Kysely<Database>, id: string, status: string, now: Date): Promise<TransactionView> {
  const wanted = canonicalEnum(status, STATUSES)
  if (!wanted) throw new AppError('bad_request', `status: must be one of ${STATUSES.join(', ')} (any case)`)
  const next: TransactionStatus = wanted
  return writeTransaction(db, async (trx) => {
    const row = await findTransactionById(trx, id)
    if (!row) throw notFound(`no transaction with id ${shown(id)}`)
    if (row.type === 'WITHDRAWAL_FEE') throw new AppError('unprocessable', `a withdrawal fee follows its withdrawal; change ${row.withdrawal_id} instead`)
    checkTransition(row.status, next)
    const moving = [row]
    const fee = row.type === 'WITHDRAWAL' ? await repo.findFee(trx, row.id) : undefined
    if (fee) moving.push(fee)
    const stamp = iso(now)
    const account = await repo.ensureAccount(trx, row.member_id, row.currency, stamp)
    const available = new Money(account.available_funds).plus(statusDelta(moving, next))
    if (available.lt(0)) {
      throw new AppError('unprocessable', `this would take available funds to ${amountText(available)} ${account.currency}; the account may not go below zero`)
    }
    for (const r of moving) await repo.updateTransactionRow(trx, r.id, {status: next, updated_at: stamp})
    await repo.setAvailableFunds(trx, row.member_id, amountText(available), stamp)
    return transactionView((await repo.findTransaction(trx, row.id))!)
  })
}

/** Only the moves TRANSITIONS lists; the refusal names the ones there are. */
function checkTransition(current: TransactionStatus, next: TransactionStatus): void {
  const allowed = TRANSITIONS[current]
  if (allowed.includes(next)) return
  throw new AppError('unprocessable', `a ${current} transaction cannot become ${next}${allowed.length ? ` (it can become ${allowed.join(' or ')})` : ' (that status is final)'}`)
}

/** How available funds change when these rows (a withdrawal and its fee) all move to `next`. */
function statusDelta(moving: readonly TransactionRow[], next: TransactionStatus): Money {
  let delta = ZERO
  for (const r of moving) {
    const amount = new Money(r.amount)
    delta = delta.plus(effect(r.type, next, amount)).minus(effect(r.type, r.status, amount))
  }
  return delta
}

export interface RestrictionResult {
  user_id: number
  type: string
  restricted: boolean
  restricted_types: string[]
}

/** Bars (or, with lift, re-allows) a withdrawal type for one person. */
export async function restrictWithdrawalType(db: Kysely<Database>, member: MemberRow, type: string, lift: boolean, now: Date): Promise<RestrictionResult> {
  const code = type.trim().toUpperCase()
  return writeTransaction(db, async (trx) => {
    if (!(await repo.findWithdrawalType(trx, code))) {
      const known = (await repo.listWithdrawalTypeRows(trx)).map((r) => r.code)
      throw new AppError('bad_request', `type: "${type}" is not a withdrawal type (one of ${known.join(', ')})`)
    }
    if (lift) await repo.removeRestriction(trx, member.id, code)
    else await repo.addRestriction(trx, member.id, code, iso(now))
    return {user_id: member.id, type: code, restricted: !lift, restricted_types: await repo.listRestrictions(trx, member.id)}
  })
}

/** Marks whether the person gets preferred treatment in survey invitations. */
export async function setPreferredStatus(db: Kysely<Database>, member: MemberRow, preferred: boolean, now: Date): Promise<AccountSummary> {
  return writeTransaction(db, async (trx) => {
    const stamp = iso(now)
    await repo.ensureAccount(trx, member.id, DEFAULT_CURRENCY, stamp)
    await repo.setPreferred(trx, member.id, preferred, stamp)
    return getSummary(trx, member)
  })
}
