import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {keyValues, transactionText} from './output/balance.js'
import {parseAmount} from '../src/interfaces/balance/money.js'
import {ACCOUNT_KEYS, CREDIT_TYPES} from '../src/interfaces/balance/schema.js'
import {postCredit, resolveAccountHolder, type TransactionView} from '../src/interfaces/balance/service.js'
import {answerCheck, BaseCommand, choiceFlag} from './base-command.js'
import {ledgerNote} from './support/audit-notes.js'

export default class Credit extends BaseCommand<typeof Credit> {
  static override description = 'Credit a balance account (Completed at once, so available immediately)'
  static override examples = [
    '<%= config.bin %> credit user_id 1 --amount 150.50 --type HONORARIUM --survey-id P-1001',
    '<%= config.bin %> credit npi 1234567893 --amount 5 --type CREDIT_ADJUSTMENT --property reason=goodwill',
  ]
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }
  static override asked = ['amount']
  static override flags = {
    amount: Flags.string({description: 'decimal amount in the account currency, e.g. 150.25'}),
    type: choiceFlag(CREDIT_TYPES, {description: 'transaction type', default: 'HONORARIUM'}),
    'survey-id': Flags.string({description: 'project the credit pays for'}),
    property: Flags.string({description: 'extra property key=value (repeatable)', multiple: true}),
  }

  async run(): Promise<TransactionView> {
    const amount = await this.need(this.flags.amount, 'amount', 'Amount', (v) => answerCheck(() => parseAmount(v)))
    const {db} = await this.openStore()
    const member = await resolveAccountHolder(db, this.args.key, this.args.id)
    const input = {type: this.flags.type, amount, survey_id: this.flags['survey-id'], properties: keyValues(this.flags.property, 'property')}
    const tx = await this.audited(
      (store) => postCredit(store.db, member, input, this.clock.now()),
      (credited) => ledgerNote(member.id, credited, {survey_id: credited.survey_id, properties: credited.properties}),
    )
    this.say(transactionText(tx))
    return tx
  }
}
