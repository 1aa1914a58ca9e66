import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {keyValues, transactionText} from './output/balance.js'
import {parseAmount} from '../src/interfaces/balance/money.js'
import {ACCOUNT_KEYS} from '../src/interfaces/balance/schema.js'
import {postDebit, resolveAccountHolder, type TransactionView} from '../src/interfaces/balance/service.js'
import {answerCheck, BaseCommand} from './base-command.js'
import {ledgerNote} from './support/audit-notes.js'

export default class Debit extends BaseCommand<typeof Debit> {
  static override description = 'Post a correcting debit (DEBIT_ADJUSTMENT); refused if it would overdraw the account'
  static override examples = ['<%= config.bin %> debit user_id 1 --amount 12.00 --property reason="duplicate honorarium"']
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }
  static override asked = ['amount']
  static override flags = {
    amount: Flags.string({description: 'decimal amount, e.g. 12.00'}),
    property: Flags.string({description: 'extra property key=value (repeatable)', multiple: true}),
  }

  async run(): Promise<TransactionView> {
    const amount = await this.need(this.flags.amount, 'amount', 'Amount', (v) => answerCheck(() => parseAmount(v)))
    const {db} = await this.openStore()
    const member = await resolveAccountHolder(db, this.args.key, this.args.id)
    const input = {amount, properties: keyValues(this.flags.property, 'property')}
    const tx = await this.audited(
      (store) => postDebit(store.db, member, input, this.clock.now()),
      (debited) => ledgerNote(member.id, debited, {properties: debited.properties}),
    )
    this.say(transactionText(tx))
    return tx
  }
}
