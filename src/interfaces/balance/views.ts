import {z} from 'zod'
import {fromJsonText} from '../../store/json.js'
import type {MemberRow} from '../../registry/tables.js'
import {DEFAULT_CURRENCY, Money, ZERO} from './money.js'
import {isCreditType, TRANSACTION_TYPES, type TransactionStatus, type TransactionType} from './schema.js'
import type {TransactionRow, WithdrawalTypeRow} from './tables.js'

/*
 * What the ledger answers, in process: amounts as exact decimals (Money). The wire form of each is
 * its zod schema in schema.ts (amounts as JSON numbers written from the decimal text, toJson).
 */

type Decimal = InstanceType<typeof Money>

export interface AccountSummary {
  available_funds: Decimal
  currency: string
  preferred_status: boolean
}

export interface TransactionView {
  id: string
  /** Negative for debits. */
  amount: Decimal
  currency: string
  type: TransactionType
  type_description: string
  status: TransactionStatus
  survey_id: string | null
  created_date: string
  properties: Record<string, string>
}

export type TransactionListItem = Omit<TransactionView, 'created_date' | 'properties'> & {
  current_balance: Decimal
  created_date: string
  properties: Record<string, string>
}

export interface MoneyObject {
  amount: Decimal
  currency: string
}

export interface WithdrawalTypeView {
  type: string
  description: string
  fee: MoneyObject | null
  minimum_balance_required: MoneyObject | null
  required_fields: string[]
  optional_fields: string[]
}

/** The path of one transaction, as a withdrawal's `uri` gives it. */
export function transactionPath(id: string): string {
  return `/balance/transactions/${id}`
}

/**
 * What a transaction contributes to available funds: a credit counts once Completed; a debit
 * holds its money while Processing or OnHold and keeps it once Completed. Cancelled and Reversed
 * count for nothing.
 */
export function effect(type: string, status: string, amount: Decimal): Decimal {
  if (isCreditType(type)) return status === 'Completed' ? amount : ZERO
  return status === 'Processing' || status === 'OnHold' || status === 'Completed' ? amount.neg() : ZERO
}

/** How the JSON columns of the ledger are checked when read back. */
const propertiesSchema = z.record(z.string(), z.string())
export const fieldListSchema = z.array(z.string())

export function transactionView(row: TransactionRow): TransactionView {
  const amount = new Money(row.amount)
  return {
    id: row.id,
    amount: isCreditType(row.type) ? amount : amount.neg(),
    currency: row.currency,
    type: row.type,
    type_description: TRANSACTION_TYPES[row.type],
    status: row.status,
    survey_id: row.survey_id,
    created_date: row.created_at,
    properties: fromJsonText(row.properties, propertiesSchema, `the properties of transaction ${row.id}`),
  }
}

function moneyObject(amount: string | null, currency: string | null): MoneyObject | null {
  return amount === null ? null : {amount: new Money(amount), currency: currency ?? DEFAULT_CURRENCY}
}

export function withdrawalTypeView(row: WithdrawalTypeRow): WithdrawalTypeView {
  return {
    type: row.code,
    description: row.description,
    fee: moneyObject(row.fee_amount, row.fee_currency),
    minimum_balance_required: moneyObject(row.minimum_amount, row.minimum_currency),
    required_fields: fromJsonText(row.required_fields, fieldListSchema, `the required fields of ${row.code}`),
    optional_fields: fromJsonText(row.optional_fields, fieldListSchema, `the optional fields of ${row.code}`),
  }
}

/** Why a type is not offered to this person, or undefined when it is. */
export function unavailableReason(row: WithdrawalTypeRow, member: Pick<MemberRow, 'country'>, restricted: readonly string[]): string | undefined {
  if (restricted.includes(row.code)) return `withdrawal type ${row.code} is restricted for this person`
  const countries = row.countries ? fromJsonText(row.countries, fieldListSchema, `the countries of ${row.code}`) : null
  if (countries && !countries.includes(member.country)) return `withdrawal type ${row.code} is not offered to members practising in ${member.country}`
  return undefined
}

/** A caller's identifier in a message: quoted, and cut short when it is long. */
export function shown(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)
}
