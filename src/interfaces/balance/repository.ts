import {isPostgres, lockForUpdate} from '../../store/dialect.js'
import type {MemberRow} from '../../registry/tables.js'
import type {BalanceDb as Db} from './tables.js'
import {prepared} from '../../store/prepared.js'
import type {DirectExecutor} from '../../store/context.js'
import {type Insertable, type Selectable, sql} from 'kysely'
import {assertFunds, assertWithdrawalWrite, type WithdrawalLines} from './invariants.js'
import type {AccountRow, BalanceIdempotencyTable, NewTransactionRow, TransactionRow, TransactionUpdate, WithdrawalTypeRow} from './tables.js'

/*
 * The statements of a withdrawal and of a summary run thousands of times a second under load:
 * prepared once (store/prepared.ts) rather than built and compiled on every call.
 */
const accountOf = prepared(1, (db: Db, memberId: number) => db.selectFrom('balance_accounts').selectAll().where('member_id', '=', memberId))
const lockedAccountOf = prepared(1, (db: Db, memberId: number) => lockForUpdate(db, db.selectFrom('balance_accounts').selectAll().where('member_id', '=', memberId)))

export async function findAccount(db: Db, memberId: number): Promise<AccountRow | undefined> {
  return (await accountOf(db, memberId))[0]
}

/** Creates the member's account unless it exists. */
export async function ensureAccount(db: Db, memberId: number, currency: string, now: string): Promise<AccountRow> {
  await db
    .insertInto('balance_accounts')
    .values({member_id: memberId, currency, available_funds: '0', preferred_status: 0, created_at: now, updated_at: now})
    .onConflict((oc) => oc.column('member_id').doNothing())
    .execute()
  return (await findAccount(db, memberId))!
}

/**
 * The member's account, created if missing, locked for the rest of the write transaction: every
 * withdrawal of one person decides on the balance it read after this, one at a time.
 */
async function lockAccount(db: Db, memberId: number, currency: string, now: string): Promise<AccountRow> {
  const locked = async () => (await lockedAccountOf(db, memberId))[0]
  // Almost every withdrawal finds the account there: one locking read. The first one creates it.
  const found = await locked()
  if (found) return found
  await db
    .insertInto('balance_accounts')
    .values({member_id: memberId, currency, available_funds: '0', preferred_status: 0, created_at: now, updated_at: now})
    .onConflict((oc) => oc.column('member_id').doNothing())
    .execute()
  return (await locked())!
}

/**
 * The member's row, read inside a withdrawal's write transaction; on PostgreSQL held with a share
 * lock until it ends, so a concurrent update of the row (a deactivation) waits for the withdrawal
 * or the withdrawal waits for it and reads the new row. Concurrent withdrawals share the lock.
 * SQLite's write transactions run one at a time, so the plain read is already current.
 */
const lockedHolderOf = prepared(1, (db: Db, memberId: number) => {
  const query = db.selectFrom('members').selectAll().where('id', '=', memberId)
  return isPostgres(db) ? query.forShare() : query
})

async function lockHolder(db: Db, memberId: number): Promise<MemberRow | undefined> {
  return (await lockedHolderOf(db, memberId))[0]
}

const fundsUpdate = prepared(3, (db: Db, memberId: number, available: string, now: string) =>
  db.updateTable('balance_accounts').set({available_funds: available, updated_at: now}).where('member_id', '=', memberId),
)

export async function setAvailableFunds(db: Db, memberId: number, available: string, now: string): Promise<void> {
  assertFunds(available, memberId)
  await fundsUpdate(db, memberId, available, now)
}

export async function setPreferred(db: Db, memberId: number, preferred: boolean, now: string): Promise<void> {
  await db
    .updateTable('balance_accounts')
    .set({preferred_status: preferred ? 1 : 0, updated_at: now})
    .where('member_id', '=', memberId)
    .execute()
}

const TRANSACTION_COLUMNS = [
  'id',
  'member_id',
  'type',
  'amount',
  'currency',
  'status',
  'survey_id',
  'properties',
  'withdrawal_id',
  'withdrawal_type',
  'member_details',
  'client_id',
  'created_at',
  'updated_at',
] as const satisfies readonly Exclude<keyof NewTransactionRow, 'seq'>[]
const transactionInsert = prepared(TRANSACTION_COLUMNS.length, (db: Db, ...values: unknown[]) =>
  db.insertInto('balance_transactions').values(Object.fromEntries(TRANSACTION_COLUMNS.map((column, i) => [column, values[i]])) as NewTransactionRow),
)

/** A transaction row's values in TRANSACTION_COLUMNS order; a nullable column left out is null, as a plain insert stores it. */
const transactionValues = (row: NewTransactionRow) => TRANSACTION_COLUMNS.map((column) => row[column] ?? null)

export async function insertTransaction(db: Db, row: NewTransactionRow): Promise<void> {
  await transactionInsert(db, ...transactionValues(row))
}

export async function findTransaction(db: Db, id: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('balance_transactions').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findFee(db: Db, withdrawalId: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('balance_transactions').selectAll().where('withdrawal_id', '=', withdrawalId).executeTakeFirst()
}

export async function listTransactionRows(db: Db, memberId: number): Promise<TransactionRow[]> {
  return db.selectFrom('balance_transactions').selectAll().where('member_id', '=', memberId).orderBy('seq').execute()
}

export async function updateTransactionRow(db: Db, id: string, patch: TransactionUpdate): Promise<void> {
  await db.updateTable('balance_transactions').set(patch).where('id', '=', id).execute()
}

export async function listWithdrawalTypeRows(db: Db): Promise<WithdrawalTypeRow[]> {
  return db.selectFrom('withdrawal_types').selectAll().where('active', '=', 1).orderBy('position').execute()
}

export async function findWithdrawalType(db: Db, code: string): Promise<WithdrawalTypeRow | undefined> {
  return db.selectFrom('withdrawal_types').selectAll().where('code', '=', code).where('active', '=', 1).executeTakeFirst()
}

/** An active withdrawal type with whether the member may not use it, in one read. */
const typeFor = prepared(2, (db: Db, code: string, memberId: number) =>
  db
    .selectFrom('withdrawal_types')
    .selectAll('withdrawal_types')
    .select((eb) =>
      eb
        .exists(eb.selectFrom('withdrawal_restrictions as r').select('r.type').where('r.member_id', '=', memberId).whereRef('r.type', '=', 'withdrawal_types.code'))
        .$castTo<number>()
        .as('restricted'),
    )
    .where('code', '=', code)
    .where('active', '=', 1),
)

async function findWithdrawalTypeFor(db: Db, code: string, memberId: number): Promise<(WithdrawalTypeRow & {restricted: number}) | undefined> {
  return (await typeFor(db, code, memberId))[0]
}

export async function listRestrictions(db: Db, memberId: number): Promise<string[]> {
  const rows = await db.selectFrom('withdrawal_restrictions').select('type').where('member_id', '=', memberId).orderBy('type').execute()
  return rows.map((r) => r.type)
}

export async function addRestriction(db: Db, memberId: number, type: string, now: string): Promise<void> {
  await db
    .insertInto('withdrawal_restrictions')
    .values({member_id: memberId, type, created_at: now})
    .onConflict((oc) => oc.columns(['member_id', 'type']).doNothing())
    .execute()
}

export async function removeRestriction(db: Db, memberId: number, type: string): Promise<void> {
  await db.deleteFrom('withdrawal_restrictions').where('member_id', '=', memberId).where('type', '=', type).execute()
}

async function findIdempotent(db: Db, clientId: string, key: string) {
  return db.selectFrom('balance_idempotency').selectAll().where('client_id', '=', clientId).where('key', '=', key).executeTakeFirst()
}

async function saveIdempotent(db: Db, row: Insertable<BalanceIdempotencyTable>): Promise<void> {
  await db.insertInto('balance_idempotency').values(row).execute()
}

/** Everything a withdrawal decides on, read after its locks (see withdrawalContext). */
export interface WithdrawalContext {
  account: AccountRow
  /** The answer remembered for the Idempotency-Key; when present, nothing below was read. */
  prior?: Selectable<BalanceIdempotencyTable> | undefined
  /** Missing when the member is gone. */
  holder?: Pick<MemberRow, 'id' | 'active' | 'country'> | undefined
  /** The active withdrawal type asked for, with whether this member is barred from it. */
  type?: (WithdrawalTypeRow & {restricted: number}) | undefined
}

/** What withdrawalContext locks and reads for: a member, the Idempotency-Key and the type asked for. */
export interface ContextAsk {
  memberId: number
  currency: string
  stamp: string
  idem?: {clientId: string; key: string} | undefined
  type: string
}

const IDEMPOTENCY_COLUMNS = ['client_id', 'key', 'request_hash', 'status', 'body', 'created_at'] as const satisfies readonly (keyof BalanceIdempotencyTable)[]

const contextCall = prepared(6, (db: Db, memberId: number, currency: string, stamp: string, clientId: string | null, key: string | null, type: string) =>
  db.selectNoFrom(sql<WithdrawalContext>`medpanel_withdrawal_context(${memberId}, ${currency}, ${stamp}, ${clientId}, ${key}, ${type})`.as('context')),
)

/**
 * Locks and reads what a withdrawal decides on, in this order: the Idempotency-Key (when given),
 * the member's account (created if missing) for update, the answer remembered for the key (and
 * nothing more when there is one), the member's row for share, the withdrawal type and whether the
 * member is barred from it. On PostgreSQL one call of a database function does it all
 * (migration 2026112901), one round trip instead of five; on SQLite, whose batch holds the write
 * lock and never waits on a network, the statements run one by one.
 */
export async function withdrawalContext(db: Db, input: ContextAsk): Promise<WithdrawalContext> {
  const {memberId, stamp, idem} = input
  if (isPostgres(db)) {
    const [row] = await contextCall(db, memberId, input.currency, stamp, idem?.clientId ?? null, idem?.key ?? null, input.type)
    return row!.context
  }
  const account = await lockAccount(db, memberId, input.currency, stamp)
  const prior = idem ? await findIdempotent(db, idem.clientId, idem.key) : undefined
  if (prior) return {account, prior}
  const holder = await lockHolder(db, memberId)
  if (!holder) return {account}
  return {account, holder, type: await findWithdrawalTypeFor(db, input.type, memberId)}
}

/** What one withdrawal writes: its ledger rows, the account's new available funds, the answer to remember. */
export interface WithdrawalWrite extends WithdrawalLines {
  rows: NewTransactionRow[]
  stamp: string
  remember?: Insertable<BalanceIdempotencyTable> | undefined
}

/**
 * The writes of a withdrawal: its ledger rows (the withdrawal and any fee), the account's new
 * available funds and the remembered answer for its Idempotency-Key. On PostgreSQL they go as one
 * statement (the inserts as data-modifying WITH clauses of the update), one round trip; the
 * statement is prepared per shape (with or without a fee, with or without a key).
 */
export async function recordWithdrawal(db: Db, write: WithdrawalWrite): Promise<void> {
  // The last look before the store: a write that breaks the ledger's invariants is refused whole.
  assertWithdrawalWrite(write)
  const {rows, memberId, available, stamp, remember} = write
  if (!isPostgres(db)) {
    for (const row of rows) await insertTransaction(db, row)
    await setAvailableFunds(db, memberId, available, stamp)
    if (remember) await saveIdempotent(db, remember)
    return
  }
  const values = [...rows.flatMap(transactionValues), available, stamp, memberId, ...(remember ? IDEMPOTENCY_COLUMNS.map((c) => remember[c]) : [])]
  await withdrawalWrite(rows.length, remember !== undefined)(db, ...values)
}

const withdrawalWrites = new Map<string, (db: Db, ...values: unknown[]) => Promise<unknown[]>>()

function withdrawalWrite(rowCount: number, remembers: boolean) {
  const shape = `${rowCount}:${remembers}`
  let write = withdrawalWrites.get(shape)
  if (!write) {
    const width = TRANSACTION_COLUMNS.length
    const arity = rowCount * width + 3 + (remembers ? IDEMPOTENCY_COLUMNS.length : 0)
    write = prepared(arity, (db: Db, ...v: unknown[]) => {
      const row = (i: number) => Object.fromEntries(TRANSACTION_COLUMNS.map((column, c) => [column, v[i * width + c]])) as NewTransactionRow
      const rest = rowCount * width
      let query = db.with('ledger', (q) => q.insertInto('balance_transactions').values(Array.from({length: rowCount}, (_, i) => row(i))))
      if (remembers) {
        const remembered = Object.fromEntries(IDEMPOTENCY_COLUMNS.map((column, c) => [column, v[rest + 3 + c]])) as Insertable<BalanceIdempotencyTable>
        query = query.with('remembered', (q) => q.insertInto('balance_idempotency').values(remembered)) as unknown as typeof query
      }
      return query
        .updateTable('balance_accounts')
        .set({available_funds: v[rest] as string, updated_at: v[rest + 1] as string})
        .where('member_id', '=', v[rest + 2] as number)
    })
    withdrawalWrites.set(shape, write)
  }
  return write
}

const contextsCall = prepared(1, (db: Db, asks: string) => db.selectNoFrom(sql<WithdrawalContext[]>`medpanel_withdrawal_contexts(${asks}::json)`.as('contexts')))

/**
 * PostgreSQL: withdrawalContext for a batch of withdrawals in one call, in the order given (which
 * is the order their locks are taken in). Two asks for one member get the same account as it
 * stands in the store; what the earlier one changes is for the caller to carry over.
 */
export async function withdrawalContexts(db: Db, asks: readonly ContextAsk[]): Promise<WithdrawalContext[]> {
  const json = JSON.stringify(
    asks.map((a) => ({member: a.memberId, currency: a.currency, stamp: a.stamp, client: a.idem?.clientId ?? null, key: a.idem?.key ?? null, type: a.type})),
  )
  const [row] = await contextsCall(db, json)
  return row!.contexts
}

/**
 * PostgreSQL: the writes of a batch of withdrawals in one statement: every ledger row in the order
 * given, every remembered answer, and each account's available funds as the last write for it
 * leaves them. The rows go as JSON, read into the tables' own row types.
 */
export async function recordWithdrawals(db: Db, writes: readonly WithdrawalWrite[]): Promise<void> {
  if (writes.length === 0) return
  for (const write of writes) assertWithdrawalWrite(write)
  const funds = new Map<number, {member_id: number; available: string; stamp: string}>()
  for (const w of writes) funds.set(w.memberId, {member_id: w.memberId, available: w.available, stamp: w.stamp})
  const ledger = JSON.stringify(writes.flatMap((w) => w.rows.map((row) => Object.fromEntries(TRANSACTION_COLUMNS.map((column) => [column, row[column] ?? null])))))
  const remembered = JSON.stringify(writes.flatMap((w) => (w.remember ? [w.remember] : [])))
  const columns = sql.raw(TRANSACTION_COLUMNS.join(', '))
  const remembers = sql.raw(IDEMPOTENCY_COLUMNS.join(', '))
  await sql`
    with ledger as (
      insert into balance_transactions (${columns})
      select ${columns} from json_populate_recordset(null::balance_transactions, ${ledger}::json) with ordinality as r order by r.ordinality
    ), remembered as (
      insert into balance_idempotency (${remembers})
      select ${remembers} from json_populate_recordset(null::balance_idempotency, ${remembered}::json)
    )
    update balance_accounts a set available_funds = f.available, updated_at = f.stamp
    from json_to_recordset(${JSON.stringify([...funds.values()])}::json) as f(member_id integer, available text, stamp text)
    where a.member_id = f.member_id
  `.execute(db)
}

/*
 * SQLite, the one writer's ledger (ledger.ts): the same reads and writes as above, run straight on
 * the connection a batch of the group writer holds (StoreContext.direct), synchronously, without
 * Kysely's executor between. Each text is prepared once by the connection's statement cache.
 */
const SQLITE = {
  account: 'select * from balance_accounts where member_id = ?',
  holder: 'select id, active, country from members where id = ?',
  restrictions: 'select type from withdrawal_restrictions where member_id = ?',
  types: 'select * from withdrawal_types where active = 1',
  answer: 'select * from balance_idempotency where client_id = ? and key = ?',
  insertTransaction: `insert into balance_transactions (${TRANSACTION_COLUMNS.join(', ')}) values (${TRANSACTION_COLUMNS.map(() => '?').join(', ')})`,
  insertAnswer: `insert into balance_idempotency (${IDEMPOTENCY_COLUMNS.join(', ')}) values (${IDEMPOTENCY_COLUMNS.map(() => '?').join(', ')})`,
  createAccount:
    "insert into balance_accounts (member_id, currency, available_funds, preferred_status, created_at, updated_at) values (?, ?, '0', 0, ?, ?) on conflict (member_id) do nothing",
  setFunds: 'update balance_accounts set available_funds = ?, updated_at = ? where member_id = ?',
} as const

/** The reads the ledger's writer makes when its memory lacks a row, on the batch's connection. */
export const ledgerReads = {
  account: (run: DirectExecutor, memberId: number) => run(SQLITE.account, [memberId])[0] as AccountRow | undefined,
  holder: (run: DirectExecutor, memberId: number) => run(SQLITE.holder, [memberId])[0] as Pick<MemberRow, 'id' | 'active' | 'country'> | undefined,
  restrictions: (run: DirectExecutor, memberId: number) => (run(SQLITE.restrictions, [memberId]) as {type: string}[]).map((r) => r.type),
  types: (run: DirectExecutor) => run(SQLITE.types, []) as WithdrawalTypeRow[],
  answer: (run: DirectExecutor, clientId: string, key: string) => run(SQLITE.answer, [clientId, key])[0] as Selectable<BalanceIdempotencyTable> | undefined,
}

/**
 * The writes of a batch of withdrawals on SQLite, in the order given: each one's ledger rows and
 * remembered answer, then each account's available funds as its last write leaves them (created
 * first if the account had no row). Every write's invariants are asserted again here.
 */
export function writeLedgerBatch(run: DirectExecutor, writes: readonly WithdrawalWrite[], missing: ReadonlySet<number>): void {
  const funds = new Map<number, WithdrawalWrite>()
  for (const write of writes) {
    assertWithdrawalWrite(write)
    for (const row of write.rows) run(SQLITE.insertTransaction, transactionValues(row))
    const {remember} = write
    if (remember)
      run(
        SQLITE.insertAnswer,
        IDEMPOTENCY_COLUMNS.map((c) => remember[c]),
      )
    funds.set(write.memberId, write)
  }
  for (const [memberId, {available, stamp, rows}] of funds) {
    assertFunds(available, memberId)
    if (missing.has(memberId)) run(SQLITE.createAccount, [memberId, rows[0]!.currency, stamp, stamp])
    run(SQLITE.setFunds, [available, stamp, memberId])
  }
}
