import {CompiledQuery, type Kysely} from 'kysely'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import type {MemberRow} from '../../registry/tables.js'
import type {BalanceView as Database} from './tables.js'
import {type BatchRunner, savepointRunner, submitToSetWriter, submitToSqliteSetWriter, writeTransaction} from '../../store/transactions.js'
import {isRetryableConflict, storeKind} from '../../store/dialect.js'
import {inBatch, type Outcome} from '../../store/writer.js'
import {asWithdrawalRequest, requirePlainAmount} from './body.js'
import {decideWithdrawal, type WithdrawalAsk, type WithdrawalResult} from './decide.js'
import {ledgerRunner} from './ledger.js'
import {DEFAULT_CURRENCY} from './money.js'
import * as repo from './repository.js'
import type {WithdrawalInput, WithdrawalRequest} from './schema.js'

export interface WithdrawalOptions {
  now: Date
  /** The balance client asking (null for an operator at the CLI). */
  clientId?: string | null
  idempotencyKey?: string | undefined
}

/**
 * Creates a withdrawal and its fee. Everything from the idempotency check to the debit happens in
 * one write transaction, so concurrent requests see each other's debits and no combination of
 * them can overdraw the account: on SQLite the transaction holds the write lock from its start
 * (BEGIN IMMEDIATE); on PostgreSQL it first locks the idempotency key and the account row, then
 * takes a share lock on the member's row, and everything it decides on (the balance, the member's
 * `active` and `country`, the type and its restriction) is read after those locks
 * (repository.ts, withdrawalContext). Only `member.id` is taken from the caller: the row it
 * resolved may be older than a deactivation that commits before this transaction, and a
 * withdrawal decided on it would slip past that deactivation.
 *
 * `body` is the edge's request (body.ts), or a caller's object, read here by the same edge.
 * On PostgreSQL the withdrawals of one event-loop turn are decided as a set (withdrawalRunner):
 * one statement locks and reads for all of them, one writes all that were granted. On SQLite the
 * group writer's one writer decides a batch in its memory of the ledger and writes the grants on
 * the driver (ledger.ts), inside the batch that holds the write lock. Called inside a write
 * transaction already (a batch's connection), it runs there on its own, reading the store.
 */
export async function createWithdrawal(
  db: Kysely<Database>,
  member: Pick<MemberRow, 'id'>,
  body: WithdrawalRequest | WithdrawalInput,
  options: WithdrawalOptions,
): Promise<WithdrawalResult> {
  const request = asWithdrawalRequest(body)
  requirePlainAmount(request)
  const clientId = options.clientId ?? null
  const idem = options.idempotencyKey !== undefined && clientId !== null ? {clientId, key: options.idempotencyKey} : undefined
  const ask: WithdrawalAsk = {
    memberId: member.id,
    currency: DEFAULT_CURRENCY,
    stamp: iso(options.now),
    idem,
    type: request.type,
    request,
    clientId,
    requestHash: idem ? sha256(`${member.id}\n${fingerprint(request)}`) : '',
  }
  if (!inBatch(db)) {
    if (storeKind(db) === 'postgres') return submitToSetWriter<WithdrawalResult>(db, withdrawalRunner, ask, member.id)
    return submitToSqliteSetWriter<WithdrawalResult>(db, sqliteLedger, ask)
  }
  return writeTransaction(db, (trx) => withdrawOne(trx, ask), {isolation: 'read committed', lockOrder: member.id})
}

/**
 * What an Idempotency-Key remembers of a request: its fields in key-order-independent JSON, the
 * amount as written (so `10.10` and `10.1` are different requests), as every release hashed it.
 */
function fingerprint(request: WithdrawalRequest): string {
  const {amount: _exact, amountWritten, ...fields} = request
  return canonical({...fields, amount: amountWritten})
}

/** Key-order-independent JSON, so the same body sent twice hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** One withdrawal in the caller's transaction: its locks and reads, its decision, its writes. */
async function withdrawOne(trx: Kysely<Database>, ask: WithdrawalAsk): Promise<WithdrawalResult> {
  const decision = decideWithdrawal(ask, await repo.withdrawalContext(trx, ask))
  if (decision.write) await repo.recordWithdrawal(trx, decision.write)
  return decision.result
}

/** SQLite: withdrawals decided as a batch in the writer's memory of the ledger (ledger.ts). */
const sqliteLedger = ledgerRunner(withdrawOne)

const raw = (text: string) => CompiledQuery.raw(text)
const UNDO_SET = raw('rollback to batch')

/**
 * A batch of withdrawals on PostgreSQL as a set, in member order (the writer sorts them): one call
 * locks and reads for every one (medpanel_withdrawal_contexts), each is decided here in turn
 * (decideInTurn), and one statement writes every grant. Four round trips for the batch, where one
 * savepoint per request costs three each. A refusal writes nothing but may leave an empty
 * account row behind (the lock created it); an account with nothing in it reads as no account. If
 * a statement fails for any other reason than a conflict (which reruns the batch), the set is
 * undone and each withdrawal runs again on its own, in a savepoint, so one bad request fails alone.
 */
const withdrawalRunner: BatchRunner = {
  begin: {serializable: raw('begin isolation level serializable; savepoint batch'), 'read committed': raw('begin isolation level read committed; savepoint batch')},
  commit: raw('commit'),
  // Every process's withdrawal batches take turns (store/postgres/writer.ts): with several `serve`
  // processes on one database, each batch then holds all its process queued while another
  // committed, where lanes running side by side split the same withdrawals into small batches.
  clusterLanes: 1,
  async run(conn, batch) {
    const asks = batch.map((job) => job.input as WithdrawalAsk)
    try {
      const {outcomes, writes} = decideInTurn(asks, await repo.withdrawalContexts(conn, asks))
      await repo.recordWithdrawals(conn, writes)
      return outcomes
    } catch (error) {
      if (isRetryableConflict(error)) throw error
      await conn.executeQuery(UNDO_SET).catch(() => {
        throw error
      })
      await conn.executeQuery(raw('savepoint request'))
      return savepointRunner.run(
        conn,
        batch.map((job) => ({...job, fn: (trx) => withdrawOne(trx, job.input as WithdrawalAsk)})),
      )
    }
  },
}

/**
 * Decides a batch's withdrawals in order, an earlier grant's debit and remembered answer carried
 * over to a later request for the same account or key (the contexts were all read before any).
 */
function decideInTurn(asks: readonly WithdrawalAsk[], contexts: readonly repo.WithdrawalContext[]): {outcomes: Outcome[]; writes: repo.WithdrawalWrite[]} {
  const funds = new Map<number, string>()
  const answers = new Map<string, NonNullable<repo.WithdrawalContext['prior']>>()
  const writes: repo.WithdrawalWrite[] = []
  const carry = (write: repo.WithdrawalWrite, key: string | undefined) => {
    writes.push(write)
    funds.set(write.memberId, write.available)
    if (key !== undefined && write.remember) answers.set(key, write.remember)
  }
  const outcomes = asks.map((ask, i): Outcome => {
    const read = contexts[i]!
    const key = ask.idem && `${ask.idem.clientId}\n${ask.idem.key}`
    const answered = key === undefined ? undefined : answers.get(key)
    const available = funds.get(ask.memberId)
    const account = available === undefined ? read.account : {...read.account, available_funds: available}
    try {
      const {result, write} = decideWithdrawal(ask, answered ? {account, prior: answered} : {...read, account})
      if (write) carry(write, key)
      return {ok: true, value: result}
    } catch (error) {
      return {ok: false, error}
    }
  })
  return {outcomes, writes}
}
