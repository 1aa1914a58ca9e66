import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {keyValues, transactionText} from './output/balance.js'
import type {Decimal} from 'decimal.js'
import {formatMoney, parseAmount} from '../src/interfaces/balance/money.js'
import {listCountries} from '../src/lib/iso3166.js'
import {regionsOf} from '../src/lib/iso3166-regions.js'
import {ACCOUNT_KEYS} from '../src/interfaces/balance/schema.js'
import {withdrawalRequest} from '../src/interfaces/balance/body.js'
import {
  checkWithdrawalFunds,
  createWithdrawal,
  getSummary,
  getTransaction,
  listTransactions,
  listWithdrawalTypes,
  resolveAccountHolder,
  type TransactionView,
  type WithdrawalTypeView,
} from '../src/interfaces/balance/service.js'
import {answerCheck, BaseCommand} from './base-command.js'
import {readInputObject} from './input-file.js'

const FIELD_LABELS: Record<string, string> = {
  first_name: 'First name',
  last_name: 'Last name (no degrees or honorifics)',
  email: 'E-mail address',
  address_line1: 'Street and number',
  address_line2: 'Apartment or floor',
  address_line3: 'Neighbourhood or district',
  city: 'City',
  region: 'Region',
  postal_code: 'Postal code',
  country: 'Country',
  phone_number: 'Phone number (international)',
}

export default class Withdraw extends BaseCommand<typeof Withdraw> {
  static override description =
    "Withdraw from a balance account. On a terminal, asks for the type, the amount and the type's required member details; otherwise they come from flags."
  static override examples = [
    '<%= config.bin %> withdraw user_id 1',
    '<%= config.bin %> withdraw user_id 1 --type PAYPAL --amount 25 --detail first_name=Dana --detail last_name=Whitfield --detail email=dana@example.com',
    '<%= config.bin %> withdraw npi 1234567893 --type CHECK --amount 40 --details check-address.json --json',
  ]
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }
  static override asked = ['type', 'amount']
  static override flags = {
    type: Flags.string({description: 'withdrawal type code (see list-withdrawal-types)'}),
    amount: Flags.string({description: 'decimal amount, e.g. 25.00'}),
    details: Flags.string({description: 'JSON file with the member_details object', exclusive: ['detail']}),
    detail: Flags.string({description: 'one member detail as field=value (repeatable)', multiple: true}),
  }

  async run(): Promise<WithdrawalOutput> {
    const {db} = await this.openStore()
    const member = await resolveAccountHolder(db, this.args.key, this.args.id)
    const types = await listWithdrawalTypes(db, member)
    const prompting = this.canPrompt()

    let typeCode = this.flags.type?.trim().toUpperCase()
    if (!typeCode) {
      if (!prompting) throw new AppError('bad_request', 'missing required flag --type')
      if (types.length === 0) throw new AppError('forbidden', 'no withdrawal type is available to this person')
      const summary = await getSummary(db, member)
      this.log(`Available funds: ${formatMoney(summary.available_funds, summary.currency)}`)
      const {select} = await import('@inquirer/prompts')
      typeCode = await select({
        message: 'Withdrawal type',
        choices: types.map((t) => ({value: t.type, name: `${t.type} — ${t.description}`, description: describeCosts(t)})),
      })
    }
    const chosen = types.find((t) => t.type === typeCode)
    const funds = chosen && prompting ? await getSummary(db, member) : undefined
    // At the prompt the amount is checked as the service checks it (exact decimals, the type's
    // fee and minimum balance), before any of the type's detail fields are asked for.
    const amount = await this.need(this.flags.amount, 'amount', 'Amount', (v) =>
      answerCheck(() => {
        const wanted = parseAmount(v, funds?.currency)
        if (chosen && funds) checkWithdrawalFunds(chosen, wanted, funds.available_funds, funds.currency)
      }),
    )

    const details = this.flags.details ? await readInputObject('details', this.flags.details) : keyValues(this.flags.detail, 'detail')
    // Unknown or barred types go straight to the service, which explains the refusal.
    if (chosen && prompting) await askMissing(chosen, details)

    // The same edge as the route's body: the schema once, the amount an exact decimal.
    const request = withdrawalRequest({type: typeCode, amount: amount.trim(), member_details: details})
    // The type's detail fields (names, addresses, account numbers) are recorded by name only.
    const result = await this.audited(
      (store) => createWithdrawal(store.db, member, request, {now: this.clock.now(), clientId: null}),
      (made) => ({
        kind: 'account',
        target: member.id,
        changes: {transaction_id: made.created.transaction_id, type: request.type, amount: request.amount, detail_fields: Object.keys(details).sort()},
      }),
    )
    const tx = await getTransaction(db, result.created.transaction_id)
    const fee = (await listTransactions(db, member)).find((t) => t.type === 'WITHDRAWAL_FEE' && t.properties.withdrawal_id === tx.id)
    const after = await getSummary(db, member)
    const feeView = fee ? await getTransaction(db, fee.id) : null
    this.say(`${transactionText(tx)}${feeView ? `\n\nfee\n${transactionText(feeView)}` : ''}\n\navailable funds now  ${formatMoney(after.available_funds, after.currency)}`)
    return {...tx, transaction_id: tx.id, fee: feeView, available_funds_after: after.available_funds}
  }
}

/** The withdrawal as every other view prints it, plus its fee and what is left. */
type WithdrawalOutput = TransactionView & {transaction_id: string; fee: TransactionView | null; available_funds_after: Decimal}

function describeCosts(t: WithdrawalTypeView): string {
  const fee = t.fee ? `fee ${formatMoney(t.fee.amount, t.fee.currency)}` : 'no fee'
  const min = t.minimum_balance_required ? `minimum balance ${formatMoney(t.minimum_balance_required.amount, t.minimum_balance_required.currency)}` : 'no minimum'
  return `${fee}, ${min}`
}

/** Asks for each required field not given yet; country and region are chosen from the ISO lists. */
async function askMissing(type: WithdrawalTypeView, details: Record<string, unknown>): Promise<void> {
  // Prompt libraries load only when someone is at a terminal to answer them.
  const {input, select} = await import('@inquirer/prompts')
  const order = [...type.required_fields].sort((a, b) => (a === 'region' ? 1 : b === 'region' ? -1 : 0))
  for (const field of order) {
    if (typeof details[field] === 'string' && (details[field] as string).trim()) continue
    const message = FIELD_LABELS[field] ?? field
    if (field === 'country') {
      details.country = await select({
        message,
        choices: [...listCountries()].sort((a, b) => a.short_name.localeCompare(b.short_name)).map((c) => ({value: c.alpha_2_code, name: `${c.short_name} (${c.alpha_2_code})`})),
        default: 'US',
        pageSize: 12,
      })
    } else if (field === 'region' && typeof details.country === 'string' && regionsOf(details.country.toUpperCase())?.length) {
      details.region = await select({
        message,
        choices: [...regionsOf(details.country.toUpperCase())!]
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((r) => ({value: r.region_code, name: `${r.name} (${r.region_code})`})),
        pageSize: 12,
      })
    } else {
      details[field] = await input({message, required: true, validate: (v) => (v.trim() ? true : 'required')})
    }
  }
}
