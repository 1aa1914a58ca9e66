import {isPostgres, lockForUpdate} from '../../store/dialect.js'
import type {MemberRow} from '../../registry/tables.js'
import type {Db} from '../../store/database.js'
import {prepared} from '../../store/prepared.js'
import type {Insertable} from 'kysely'
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
export async function lockAccount(db: Db, memberId: number, currency: string, now: string): Promise<AccountRow> {
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

export async function lockHolder(db: Db, memberId: number): Promise<MemberRow | undefined> {
  return (await lockedHolderOf(db, memberId))[0]
}

const fundsUpdate = prepared(3, (db: Db, memberId: number, available: string, now: string) =>
  db.updateTable('balance_accounts').set({available_funds: available, updated_at: now}).where('member_id', '=', memberId),
)

export async function setAvailableFunds(db: Db, memberId: number, available: string, now: string): Promise<void> {
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

export async function insertTransaction(db: Db, row: NewTransactionRow): Promise<void> {
  // A nullable column the row leaves out is stored as null, as a plain insert would store it.
  await transactionInsert(db, ...TRANSACTION_COLUMNS.map((column) => row[column] ?? null))
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

export async function findWithdrawalTypeFor(db: Db, code: string, memberId: number): Promise<(WithdrawalTypeRow & {restricted: number}) | undefined> {
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

export async function findIdempotent(db: Db, clientId: string, key: string) {
  return db.selectFrom('balance_idempotency').selectAll().where('client_id', '=', clientId).where('key', '=', key).executeTakeFirst()
}

export async function saveIdempotent(db: Db, row: Insertable<BalanceIdempotencyTable>): Promise<void> {
  await db.insertInto('balance_idempotency').values(row).execute()
}
