import {amountText, Money} from './money.js'
import type {NewTransactionRow} from './tables.js'

/*
 * The ledger's invariants, asserted where a withdrawal is decided and again where anything is
 * written, so a bug in either place can never reach the store: no account's available funds below
 * zero, and a withdrawal written with exactly the fee line its type charges (CHECK's 2.50), the
 * funds moving by exactly the lines written. A broken one throws LedgerInvariantError: in tests
 * the test fails on it; in production the write transaction rolls back, the caller gets the
 * interface's 500 and the log line (app.onError) names the invariant.
 */

/** A broken ledger invariant: a bug in the ledger, never a caller's mistake (so a 500, not a 4xx). */
export class LedgerInvariantError extends Error {
  constructor(
    readonly invariant: string,
    detail: string,
  ) {
    super(`ledger invariant broken, ${invariant}: ${detail}`)
    this.name = 'LedgerInvariantError'
  }
}

export const NO_NEGATIVE_FUNDS = 'no negative available funds'
export const FEE_LINE = 'the fee line beside its withdrawal'
export const FUNDS_FOLLOW_LINES = 'available funds move by the lines written'

/** Available funds as about to be stored for a member. */
export function assertFunds(available: string, memberId: number): void {
  if (new Money(available).lt(0)) {
    throw new LedgerInvariantError(NO_NEGATIVE_FUNDS, `member ${memberId} would have ${available}`)
  }
}

/** What a withdrawal writes, as far as its invariants go (repository.ts WithdrawalWrite). */
export interface WithdrawalLines {
  rows: readonly NewTransactionRow[]
  memberId: number
  /** Available funds after the write, and as they were read before it. */
  available: string
  before: string
  /** The fee the decision charged ("0" for none). */
  fee: string
}

/** One withdrawal line, its fee line when the fee is not zero (and none otherwise), funds down by both, never below zero. */
export function assertWithdrawalWrite(write: WithdrawalLines): void {
  const {rows, memberId} = write
  const withdrawal = rows[0]
  if (withdrawal?.type !== 'WITHDRAWAL') throw new LedgerInvariantError(FEE_LINE, `a write for member ${memberId} does not start with its withdrawal`)
  const fees = rows.slice(1)
  const fee = new Money(write.fee)
  const expected = fee.isZero() ? 0 : 1
  const linked = fees.every((row) => row.type === 'WITHDRAWAL_FEE' && row.withdrawal_id === withdrawal.id && new Money(row.amount).eq(fee))
  if (fees.length !== expected || !linked) {
    throw new LedgerInvariantError(FEE_LINE, `withdrawal ${withdrawal.id} charges a fee of ${amountText(fee)} but is written with ${fees.length} fee line(s)`)
  }
  const moved = rows.reduce((sum, row) => sum.plus(row.amount), new Money(0))
  if (!new Money(write.before).minus(moved).eq(write.available)) {
    throw new LedgerInvariantError(FUNDS_FOLLOW_LINES, `withdrawal ${withdrawal.id} takes ${amountText(moved)} from ${write.before} but leaves ${write.available}`)
  }
  assertFunds(write.available, memberId)
}
