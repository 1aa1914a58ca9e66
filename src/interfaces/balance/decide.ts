import {AppError, isClientError, notFound} from '../../errors.js'
import type {RefusalReason} from './metrics.js'
import {newTimeOrderedUuid} from '../../lib/ids.js'
import {fromJsonText, toJsonText} from '../../store/json.js'
import {assertWithdrawalWrite} from './invariants.js'
import {amountText, checkAmount, Money, parseAmount, ZERO} from './money.js'
import type * as repo from './repository.js'
import {validateMemberDetails, type MemberDetails, type WithdrawalCreated, type WithdrawalRequest, withdrawalCreatedSchema} from './schema.js'
import type {NewTransactionRow} from './tables.js'
import {transactionPath, unavailableReason, type WithdrawalTypeView, withdrawalTypeView} from './views.js'

type Decimal = InstanceType<typeof Money>

/** A withdrawal asked for: what to lock and read for it, and the request to decide on. */
export interface WithdrawalAsk extends repo.ContextAsk {
  request: WithdrawalRequest
  clientId: string | null
  requestHash: string
}

export interface WithdrawalResult {
  created: WithdrawalCreated
  /** True when an earlier request with the same Idempotency-Key produced this answer. */
  replayed: boolean
}

/** A decision: the answer, and what a grant writes. */
export interface WithdrawalDecision {
  result: WithdrawalResult
  write?: repo.WithdrawalWrite
}

/** The refusals of a withdrawal that have a reason of their own (refusalReason). */
const refusals = new WeakMap<AppError, RefusalReason>()

function refusal(reason: RefusalReason, error: AppError): AppError {
  refusals.set(error, reason)
  return error
}

/**
 * Why a withdrawal request was refused, for the metrics: the reason its refusal was made with, an
 * unknown account for any other 404, and an invalid request for any other answer a caller caused
 * (the body, the amount, member_details). Undefined for what is no refusal (a store failure).
 */
export function refusalReason(error: unknown): RefusalReason | undefined {
  if (!isClientError(error)) return undefined
  return refusals.get(error) ?? (error.status === 404 ? 'unknown_account' : 'invalid')
}

/**
 * Whether `available` funds allow a withdrawal of `amount` of `type`: the type's minimum balance,
 * then the amount and the type's fee together. Returns the fee; a refusal is thrown with its
 * reason. The service decides with it, and `withdraw` asks it at the prompt, before the details.
 */
export function checkWithdrawalFunds(type: WithdrawalTypeView, amount: Decimal, available: Decimal, currency: string): Decimal {
  const fee = type.fee?.amount ?? ZERO
  const minimum = type.minimum_balance_required?.amount ?? ZERO
  if (available.lt(minimum)) {
    throw refusal(
      'below_minimum',
      new AppError('unprocessable', `available funds of ${amountText(available)} ${currency} are below the minimum balance of ${amountText(minimum)} required for ${type.type}`),
    )
  }
  if (amount.plus(fee).gt(available)) {
    const what = fee.isZero() ? `amount ${amountText(amount)}` : `amount ${amountText(amount)} plus the ${type.type} fee of ${amountText(fee)}`
    throw refusal('insufficient_funds', new AppError('unprocessable', `insufficient funds: ${what} exceeds available funds of ${amountText(available)} ${currency}`))
  }
  return fee
}

/**
 * Decides a withdrawal from what was locked and read for it: the answer remembered for its key, a
 * refusal (thrown, with its reason for the metrics), or a grant with what it writes. Pure: it reads
 * nothing but its arguments (and makes new ids); the caller writes the grant.
 */
export function decideWithdrawal(ask: WithdrawalAsk, context: repo.WithdrawalContext): WithdrawalDecision {
  if (context.prior) return replay(ask, context.prior)
  const type = eligibleType(ask, context)
  const details = validateMemberDetails(ask.request.member_details, type.required_fields, type.optional_fields, type.type)
  const {currency} = context.account
  const amount = requestedAmount(ask.request, currency)
  const available = new Money(context.account.available_funds)
  const fee = checkWithdrawalFunds(type, amount, available, currency)
  const id = newTimeOrderedUuid()
  const created = {transaction_id: id, uri: transactionPath(id)}
  const write: repo.WithdrawalWrite = {
    rows: withdrawalLines(ask, {id, type, details, amount, fee, currency}),
    memberId: ask.memberId,
    available: amountText(available.minus(amount).minus(fee)),
    before: amountText(available),
    fee: amountText(fee),
    stamp: ask.stamp,
    remember: ask.idem
      ? {client_id: ask.idem.clientId, key: ask.idem.key, request_hash: ask.requestHash, status: 201, body: toJsonText(created), created_at: ask.stamp}
      : undefined,
  }
  // Where it is decided: no grant leaves the ledger broken (asserted again where it is written).
  assertWithdrawalWrite(write)
  return {result: {created, replayed: false}, write}
}

/**
 * The amount decided on: the edge's exact decimal. A number an in-process caller passed (no JSON
 * text) is read as parseAmount reads numbers, so one that prints with an exponent is out of range.
 */
function requestedAmount(request: WithdrawalRequest, currency: string): Decimal {
  return typeof request.amountWritten === 'number' ? parseAmount(request.amountWritten, currency) : checkAmount(request.amount, currency)
}

/** The answer remembered for the Idempotency-Key, for the same request only. */
function replay(ask: WithdrawalAsk, prior: NonNullable<repo.WithdrawalContext['prior']>): WithdrawalDecision {
  if (prior.request_hash !== ask.requestHash) {
    throw refusal('idempotency_conflict', new AppError('unprocessable', 'Idempotency-Key: this key was already used for a different request'))
  }
  return {result: {created: fromJsonText(prior.body, withdrawalCreatedSchema, 'a remembered withdrawal answer'), replayed: true}}
}

/** The type asked for, when this member (still there, still active) may use it. */
function eligibleType(ask: WithdrawalAsk, {holder, type: typeRow}: repo.WithdrawalContext): WithdrawalTypeView {
  if (!holder) throw notFound(`no account for user_id ${ask.memberId}`)
  if (holder.active !== 1) throw refusal('inactive_member', new AppError('forbidden', "this person's membership is inactive; withdrawals are closed"))
  if (!typeRow) throw refusal('unknown_type', new AppError('unprocessable', `type: "${ask.request.type}" is not a withdrawal type; list them with GET …/withdrawal_types`))
  const denied = unavailableReason(typeRow, holder, Number(typeRow.restricted) ? [typeRow.code] : [])
  if (denied) throw refusal('restricted', new AppError('forbidden', denied))
  return withdrawalTypeView(typeRow)
}

interface Granted {
  id: string
  type: WithdrawalTypeView
  details: MemberDetails
  amount: Decimal
  fee: Decimal
  currency: string
}

/** The ledger lines of a granted withdrawal: the withdrawal, then its fee line when the type charges one. */
function withdrawalLines(ask: WithdrawalAsk, {id, type, details, amount, fee, currency}: Granted): NewTransactionRow[] {
  const base = {member_id: ask.memberId, currency, survey_id: null, withdrawal_type: type.type, client_id: ask.clientId, created_at: ask.stamp, updated_at: ask.stamp}
  const rows: NewTransactionRow[] = [
    {
      ...base,
      id,
      type: 'WITHDRAWAL',
      amount: amountText(amount),
      status: 'Processing',
      properties: toJsonText({withdrawal_type: type.type, vendor: type.description}),
      withdrawal_id: null,
      member_details: toJsonText(details),
    },
  ]
  if (fee.isZero()) return rows
  rows.push({
    ...base,
    id: newTimeOrderedUuid(),
    type: 'WITHDRAWAL_FEE',
    amount: amountText(fee),
    status: 'Processing',
    properties: toJsonText({withdrawal_type: type.type, withdrawal_id: id}),
    withdrawal_id: id,
    member_details: null,
  })
  return rows
}
