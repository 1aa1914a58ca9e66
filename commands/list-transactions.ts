import {Args} from '@oclif/core'
import {transactionsText} from './output/balance.js'
import {ACCOUNT_KEYS} from '../src/interfaces/balance/schema.js'
import {listTransactions, resolveAccountHolder, type TransactionListItem} from '../src/interfaces/balance/service.js'
import {BaseCommand} from './base-command.js'

export default class ListTransactions extends BaseCommand<typeof ListTransactions> {
  static override description = 'List every transaction of a balance account, oldest first, with the running balance'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-transactions user_id 1', '<%= config.bin %> list-transactions me 03512345671 --json']
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }

  async run(): Promise<TransactionListItem[]> {
    const {db} = await this.openStore()
    const items = await listTransactions(db, await resolveAccountHolder(db, this.args.key, this.args.id))
    this.say(transactionsText(items))
    return items
  }
}
