import {AppError} from '../../src/errors.js'
import {formatRecord, formatTable} from '../../src/lib/table.js'
import {formatMoney} from '../../src/interfaces/balance/money.js'
import type {AccountSummary, MoneyObject, RestrictionResult, TransactionListItem, TransactionView, WithdrawalTypeView} from '../../src/interfaces/balance/service.js'

export function summaryText(who: string, summary: AccountSummary): string {
  return formatRecord({
    account: who,
    available_funds: formatMoney(summary.available_funds, summary.currency),
    preferred_status: summary.preferred_status ? 'yes' : 'no',
  })
}

export function transactionsText(items: readonly TransactionListItem[]): string {
  if (items.length === 0) return 'No transactions yet.'
  return formatTable(items, [
    {header: 'CREATED', get: (t) => t.created_date},
    {header: 'ID', get: (t) => t.id},
    {header: 'TYPE', get: (t) => t.type},
    {header: 'STATUS', get: (t) => t.status},
    {header: 'AMOUNT', get: (t) => formatMoney(t.amount, t.currency), align: 'right'},
    {header: 'BALANCE', get: (t) => formatMoney(t.current_balance, t.currency), align: 'right'},
    {header: 'SURVEY', get: (t) => t.survey_id},
  ])
}

export function transactionText(t: TransactionView): string {
  return formatRecord({
    id: t.id,
    type: `${t.type} (${t.type_description})`,
    status: t.status,
    amount: formatMoney(t.amount, t.currency),
    survey_id: t.survey_id,
    created_date: t.created_date,
    properties: Object.keys(t.properties).length
      ? Object.entries(t.properties)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')
      : null,
  })
}

const money = (m: MoneyObject | null) => (m ? formatMoney(m.amount, m.currency) : null)

export function withdrawalTypesText(types: readonly WithdrawalTypeView[]): string {
  if (types.length === 0) return 'No withdrawal types are available.'
  return formatTable(types, [
    {header: 'TYPE', get: (t) => t.type},
    {header: 'FEE', get: (t) => money(t.fee), align: 'right'},
    {header: 'MINIMUM', get: (t) => money(t.minimum_balance_required), align: 'right'},
    {header: 'REQUIRED', get: (t) => t.required_fields.join(',')},
    {header: 'DESCRIPTION', get: (t) => t.description},
  ])
}

export function restrictionText(r: RestrictionResult): string {
  const now = r.restricted ? `${r.type} is now restricted for user_id ${r.user_id}` : `${r.type} is allowed again for user_id ${r.user_id}`
  return `${now}\nRestricted types: ${r.restricted_types.length ? r.restricted_types.join(', ') : 'none'}`
}

/** `k=v` flag values as an object; a value may itself contain `=`. */
export function keyValues(pairs: readonly string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const pair of pairs ?? []) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new AppError('bad_request', `--${flag} takes key=value, got "${pair}"`)
    out[pair.slice(0, at).trim()] = pair.slice(at + 1)
  }
  return out
}
