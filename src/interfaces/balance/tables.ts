import type {Generated, Insertable, Kysely, Selectable, Updateable} from 'kysely'
import type {GrantTables} from '../../grants/tables.js'
import type {RegistryTables} from '../../registry/tables.js'
import type {JsonColumn} from '../../store/json.js'
import type {MemberDetails, TransactionStatus, TransactionType} from './schema.js'

/**
 * One account per member, created on the first posting. `available_funds` is the fold of the
 * account's transactions kept up to date in the same write transaction as every posting or
 * status change, so a withdrawal checks funds with one row read. Amounts are exact decimal text.
 */
export interface BalanceAccountTable {
  member_id: number
  currency: string
  available_funds: string
  preferred_status: number
  created_at: string
  updated_at: string
}

/** A ledger line. `amount` is the positive magnitude; the type says whether it credits or debits. */
export interface BalanceTransactionTable {
  /** Insertion order, so the running balance has one well-defined order. */
  seq: Generated<number>
  id: string
  member_id: number
  type: TransactionType
  amount: string
  currency: string
  status: TransactionStatus
  survey_id: string | null
  /** Free-form string keys to string values. */
  properties: JsonColumn<Record<string, string>>
  /** On a WITHDRAWAL_FEE: the withdrawal it belongs to (its status follows that one). */
  withdrawal_id: string | null
  withdrawal_type: string | null
  /** On a WITHDRAWAL: the member details it was requested with; never shown in the API. */
  member_details: JsonColumn<MemberDetails> | null
  /** The balance client that requested a withdrawal; null for operator postings. */
  client_id: string | null
  created_at: string
  updated_at: string
}

/** The withdrawal types offered, seeded from data/withdrawal-types.json. */
export interface WithdrawalTypeTable {
  code: string
  description: string
  fee_amount: string | null
  fee_currency: string | null
  minimum_amount: string | null
  minimum_currency: string | null
  /** Member-detail field names. */
  required_fields: JsonColumn<string[]>
  optional_fields: JsonColumn<string[]>
  /** Alpha-2 codes the type is offered in (by the member's country); null = everywhere. */
  countries: JsonColumn<string[]> | null
  position: number
  active: number
}

export interface WithdrawalRestrictionTable {
  member_id: number
  type: string
  created_at: string
}

/** Remembers the answer to a withdrawal POST sent with an Idempotency-Key, per client. */
export interface BalanceIdempotencyTable {
  client_id: string
  key: string
  request_hash: string
  status: number
  /** The answer as sent: `{transaction_id, uri}`. */
  body: JsonColumn<{transaction_id: string; uri: string}>
  created_at: string
}

export interface BalanceTables {
  balance_accounts: BalanceAccountTable
  balance_transactions: BalanceTransactionTable
  withdrawal_types: WithdrawalTypeTable
  withdrawal_restrictions: WithdrawalRestrictionTable
  balance_idempotency: BalanceIdempotencyTable
}

export type AccountRow = Selectable<BalanceAccountTable>
export type TransactionRow = Selectable<BalanceTransactionTable>
export type NewTransactionRow = Insertable<BalanceTransactionTable>
export type TransactionUpdate = Updateable<BalanceTransactionTable>
export type WithdrawalTypeRow = Selectable<WithdrawalTypeTable>

/** What this layer's queries see: interface C's tables and those of the registry and grants below it. */
export type BalanceView = BalanceTables & RegistryTables & GrantTables
export type BalanceDb = Kysely<BalanceView>
