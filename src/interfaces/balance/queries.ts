import {balanceConfig} from './config.js'
import {notFound} from '../../errors.js'
import {isUuid, storedIdOf} from '../../lib/ids.js'
import {isValidNpi} from '../../lib/npi.js'
import {findMemberBy} from '../../registry/repository.js'
import type {MemberRow} from '../../registry/tables.js'
import {narrow} from '../../store/database.js'
import type {BalanceDb as Db} from './tables.js'
import {versionCache} from '../../store/version-cache.js'
import {DEFAULT_CURRENCY, Money, ZERO} from './money.js'
import * as repo from './repository.js'
import {ACCOUNT_KEYS} from './schema.js'
import type {TransactionRow} from './tables.js'
import {
  type AccountSummary,
  effect,
  shown,
  type TransactionListItem,
  type TransactionView,
  transactionView,
  unavailableReason,
  type WithdrawalTypeView,
  withdrawalTypeView,
} from './views.js'

/** Account holders as last read, while the store is unchanged (store/version-cache.ts): every call of C resolves one. */
const recentHolder = versionCache<string, MemberRow | undefined>(balanceConfig.caches.accountHolders, (row) => row !== undefined)

/**
 * Finds the person behind `{key}/{id}`. Every way of failing (an unsupported key such as
 * partner_id, a malformed identifier, nobody with it) is the spec's 404 "account not found".
 */
export async function resolveAccountHolder(db: Db, key: string, id: string): Promise<MemberRow> {
  if (!(ACCOUNT_KEYS as readonly string[]).includes(key)) throw notFound(`"${key}" is not an account key; use user_id, npi or me`)
  const value = id.trim()
  let row: MemberRow | undefined
  if (key === 'user_id') {
    // Past the id column's range names nobody, on SQLite and PostgreSQL alike (lib/ids.ts).
    const userId = storedIdOf(value)
    if (userId === undefined) throw notFound(unknownUserId(id, value))
    row = await recentHolder(db, `id:${userId}`, () => findMemberBy(narrow(db), 'id', userId))
  } else if (key === 'npi') {
    if (!isValidNpi(value)) throw notFound(`no account for npi "${id}": not a valid NPI (10 digits ending in a Luhn check digit)`)
    row = await recentHolder(db, `npi:${value}`, () => findMemberBy(narrow(db), 'npi', value))
  } else {
    if (!/^\d{10,11}$/.test(value)) throw notFound(`no account for me "${id}": an AMA ME number is 10 or 11 digits`)
    row = await recentHolder(db, `me:${value}`, () => findMemberBy(narrow(db), 'me', value))
  }
  if (!row) throw notFound(`no account for ${key} ${value}`)
  return row
}

/** Digits past the id range are answered as any other unknown user_id; anything else is no user_id. */
function unknownUserId(id: string, value: string): string {
  return /^\d+$/.test(value)
    ? `no account for user_id ${value.length > 64 ? `${value.slice(0, 64)}…` : value}`
    : `no account for user_id ${shown(id)}: a user_id is a positive integer`
}

export async function getSummary(db: Db, member: MemberRow): Promise<AccountSummary> {
  const account = await repo.findAccount(db, member.id)
  return {
    available_funds: new Money(account?.available_funds ?? '0'),
    currency: account?.currency ?? DEFAULT_CURRENCY,
    preferred_status: account?.preferred_status === 1,
  }
}

/** Oldest first, each with the balance up to and including it. */
export async function listTransactions(db: Db, member: MemberRow): Promise<TransactionListItem[]> {
  let running = ZERO
  return (await repo.listTransactionRows(db, member.id)).map((row) => {
    running = running.plus(effect(row.type, row.status, new Money(row.amount)))
    const {created_date, properties, ...rest} = transactionView(row)
    return {...rest, current_balance: running, created_date, properties}
  })
}

export async function getTransaction(db: Db, id: string): Promise<TransactionView> {
  const row = await findTransactionById(db, id)
  if (!row) throw notFound(`no transaction with id ${shown(id)}`)
  return transactionView(row)
}

/** A transaction by the id a caller gave; anything but a UUID names none and is not looked up. */
export async function findTransactionById(db: Db, id: string): Promise<TransactionRow | undefined> {
  const wanted = id.trim().toLowerCase()
  return isUuid(wanted) ? repo.findTransaction(db, wanted) : undefined
}

/** Every type when no member is given; otherwise the types this person may use. */
export async function listWithdrawalTypes(db: Db, member?: MemberRow): Promise<WithdrawalTypeView[]> {
  const rows = await repo.listWithdrawalTypeRows(db)
  if (!member) return rows.map(withdrawalTypeView)
  const restricted = await repo.listRestrictions(db, member.id)
  return rows.filter((row) => !unavailableReason(row, member, restricted)).map(withdrawalTypeView)
}
