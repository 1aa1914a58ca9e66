import type {Kysely} from 'kysely'
import type {MemberRow} from '../../registry/tables.js'
import {contextOf, type DirectExecutor} from '../../store/context.js'
import {type SetRunner, writeTransaction} from '../../store/transactions.js'
import type {Outcome} from '../../store/writer.js'
import {balanceConfig} from './config.js'
import {decideWithdrawal, type WithdrawalAsk, type WithdrawalResult} from './decide.js'
import * as repo from './repository.js'
import type {AccountRow, BalanceView as Database, WithdrawalTypeRow} from './tables.js'

/*
 * The one writer's ledger on SQLite. As TigerBeetle keeps the accounts it serves in memory, the
 * writer of a store keeps here what a withdrawal decides on: each account's available funds, each
 * holder's `active` and `country` and restricted types, the withdrawal types, and the answers of
 * the Idempotency-Keys it granted lately. A batch of queued withdrawals is decided in that memory
 * one after another (decide.ts, the same decisions as ever), with no read per request and no
 * savepoint per refusal; the batch's postings are then written on the driver itself in the group
 * writer's transaction, and every caller is answered after its commit (store/writer.ts).
 *
 * The memory is only ever used inside the batch's transaction, which holds SQLite's write lock,
 * and only while the store's epoch (StoreContext.epoch) is the one it was built at: the batch
 * reads the epoch first, and if another process committed or anything else in this process wrote
 * (a credit, a status move, a restriction, a deactivation) since this writer's last batch, the
 * memory is dropped and every row is read again from the store. A row the memory lacks is read
 * from the store. So a decision never rests on anything older than the store's own rows.
 */

type Holder = Pick<MemberRow, 'id' | 'active' | 'country'>
type Answer = NonNullable<repo.WithdrawalContext['prior']>

class LedgerMemory {
  /** The epoch the memory holds for; undefined when it holds nothing to trust. */
  epoch: string | undefined
  /** Each account as this writer last read or wrote it; null for a member without an account row. */
  readonly accounts = new Map<number, AccountRow | null>()
  /** Each holder's row (null: no such member) and restricted types. */
  readonly holders = new Map<number, {holder: Holder | null; restricted: readonly string[]}>()
  types: Map<string, WithdrawalTypeRow> | undefined
  /** Answers of Idempotency-Keys granted lately, the oldest first. */
  readonly answers = new Map<string, Answer>()

  forget(): void {
    this.epoch = undefined
    this.accounts.clear()
    this.holders.clear()
    this.types = undefined
    this.answers.clear()
  }

  /** Keeps the maps within their bounds: the members' emptied when full, the oldest answer dropped. */
  bound(): void {
    const {ledgerAccounts, ledgerAnswers} = balanceConfig.caches
    if (this.accounts.size > ledgerAccounts) this.accounts.clear()
    if (this.holders.size > ledgerAccounts) this.holders.clear()
    while (this.answers.size > ledgerAnswers) this.answers.delete(this.answers.keys().next().value!)
  }
}

const memories = new WeakMap<object, LedgerMemory>()

function memoryOf(db: object): LedgerMemory {
  let memory = memories.get(db)
  if (!memory) {
    memory = new LedgerMemory()
    memories.set(db, memory)
  }
  return memory
}

/** What a withdrawal decides on, from the memory, reading from the store what it lacks. */
function contextFor(memory: LedgerMemory, run: DirectExecutor, ask: WithdrawalAsk): repo.WithdrawalContext {
  const {memberId} = ask
  let account = memory.accounts.get(memberId)
  if (account === undefined) {
    account = repo.ledgerReads.account(run, memberId) ?? null
    memory.accounts.set(memberId, account)
  }
  // No row yet: the account as the first posting creates it (repository.ts ensureAccount).
  const accountRow = account ?? {member_id: memberId, currency: ask.currency, available_funds: '0', preferred_status: 0, created_at: ask.stamp, updated_at: ask.stamp}
  if (ask.idem) {
    const key = answerKey(ask.idem)
    let prior = memory.answers.get(key)
    if (!prior) {
      prior = repo.ledgerReads.answer(run, ask.idem.clientId, ask.idem.key)
      if (prior) memory.answers.set(key, prior)
    }
    if (prior) return {account: accountRow, prior}
  }
  let held = memory.holders.get(memberId)
  if (!held) {
    const holder = repo.ledgerReads.holder(run, memberId) ?? null
    held = {holder, restricted: holder ? repo.ledgerReads.restrictions(run, memberId) : []}
    memory.holders.set(memberId, held)
  }
  if (!held.holder) return {account: accountRow}
  memory.types ??= new Map(repo.ledgerReads.types(run).map((row) => [row.code, row]))
  const type = memory.types.get(ask.type)
  return {account: accountRow, holder: held.holder, type: type && {...type, restricted: held.restricted.includes(type.code) ? 1 : 0}}
}

const answerKey = (idem: {clientId: string; key: string}) => `${idem.clientId}\n${idem.key}`

/**
 * Decides a batch of withdrawals in the memory, in arrival order, each seeing the grants before
 * it, and writes the grants in one go. A refusal writes nothing. Runs synchronously from the
 * epoch's check to the last write: nothing else runs on the connection in between.
 */
function runBatch(conn: object, asks: readonly WithdrawalAsk[], db: object): Outcome[] {
  const context = contextOf(conn)
  const run = context?.direct
  if (!run) throw new Error('the ledger writer needs a SQLite connection it can run statements on directly')
  const memory = memoryOf(db)
  const epoch = context.epoch?.()
  if (epoch === undefined || epoch !== memory.epoch) memory.forget()
  const writes: repo.WithdrawalWrite[] = []
  const missing = new Set<number>()
  try {
    const outcomes = asks.map((ask): Outcome => {
      const read = contextFor(memory, run, ask)
      let decided: ReturnType<typeof decideWithdrawal>
      try {
        decided = decideWithdrawal(ask, read)
      } catch (error) {
        return {ok: false, error}
      }
      const {write} = decided
      if (write) {
        writes.push(write)
        if (memory.accounts.get(ask.memberId) === null) missing.add(ask.memberId)
        memory.accounts.set(ask.memberId, {...read.account, available_funds: write.available, updated_at: write.stamp})
        if (write.remember && ask.idem) memory.answers.set(answerKey(ask.idem), write.remember as Answer)
      }
      return {ok: true, value: decided.result}
    })
    repo.writeLedgerBatch(run, writes, missing)
    memory.bound()
    // After its own writes, still holding the lock: the epoch its memory now stands for.
    memory.epoch = context.epoch?.()
    return outcomes
  } catch (error) {
    memory.forget()
    throw error
  }
}

/**
 * The ledger's runner for the group writer's set queue (store/writer.ts SetWriter): a batch as a
 * set; a set that fails whole (a statement or the commit) drops the memory, and each withdrawal
 * then runs alone as a write transaction of its own, deciding on what it reads from the store.
 */
export function ledgerRunner(alone: (trx: Kysely<Database>, ask: WithdrawalAsk) => Promise<WithdrawalResult>): SetRunner {
  return {
    run: async (conn, inputs, db) => runBatch(conn, inputs as WithdrawalAsk[], db),
    abandon: (db) => memoryOf(db).forget(),
    alone: (db, input) => writeTransaction(db as Kysely<Database>, (trx) => alone(trx, input as WithdrawalAsk)),
  }
}
