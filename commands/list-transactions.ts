import * as Args from '@oclif/core/args'
import {transactionsText} from './output/balance.js'
import {ACCOUNT_KEYS, STATUSES} from '../src/interfaces/balance/schema.js'
import {listTransactions, resolveAccountHolder, type TransactionListItem} from '../src/interfaces/balance/service.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {pageOf, pagingFlags, sayMore, sinceFlag} from './output/paging.js'

export default class ListTransactions extends BaseCommand<typeof ListTransactions> {
  static override description = 'List the transactions of a balance account, oldest first, with the running balance; 100 at a time unless told'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> list-transactions user_id 1',
    '<%= config.bin %> list-transactions me 03512345671 --json',
    '<%= config.bin %> list-transactions user_id 1 --status Processing --since 2026-01-01 --limit 20',
  ]
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }
  static override flags = {
    ...pagingFlags('transactions'),
    status: choiceFlag(STATUSES, {description: 'only transactions in this status'}),
    since: sinceFlag('transactions created'),
  }

  async run(): Promise<TransactionListItem[]> {
    const f = this.flags
    const {db} = await this.openStore()
    // The running balance is a fold over the whole ledger, so the filter and the page come after it.
    const all = await listTransactions(db, await resolveAccountHolder(db, this.args.key, this.args.id))
    const matching = all.filter(
      (t) => (f.status === undefined || t.status === f.status) && (f.since === undefined || new Date(t.created_date).getTime() >= new Date(f.since).getTime()),
    )
    const {rows, total} = pageOf(matching, f)
    this.say(rows.length || all.length === 0 ? transactionsText(rows) : 'No transactions match.')
    sayMore('transactions', f, rows.length, total)
    return rows
  }
}
