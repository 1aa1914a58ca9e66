import * as Args from '@oclif/core/args'
import {summaryText} from './output/balance.js'
import {ACCOUNT_KEYS} from '../src/interfaces/balance/schema.js'
import {getSummary, resolveAccountHolder, type AccountSummary} from '../src/interfaces/balance/service.js'
import {BaseCommand} from './base-command.js'

export default class ShowBalance extends BaseCommand<typeof ShowBalance> {
  static override description = 'Show a balance account summary: available funds, currency, preferred status'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> show-balance user_id 1', '<%= config.bin %> show-balance npi 1234567893 --json']
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }

  async run(): Promise<AccountSummary> {
    const {db} = await this.openStore()
    const member = await resolveAccountHolder(db, this.args.key, this.args.id)
    const summary = await getSummary(db, member)
    this.say(summaryText(`user_id ${member.id} (${member.first_name} ${member.last_name})`, summary))
    return summary
  }
}
