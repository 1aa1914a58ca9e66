import * as Args from '@oclif/core/args'
import {formatRecord} from '../src/lib/table.js'
import {transactionWithMember} from '../src/interfaces/balance/operator.js'
import {BaseCommand} from './base-command.js'
import {transactionText} from './output/balance.js'

export default class ShowTransaction extends BaseCommand<typeof ShowTransaction> {
  static override description = 'Show one ledger transaction as interface C shows it, with the member it belongs to'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> show-transaction 6f1c…',
    `<%= config.bin %> show-transaction "$(<%= config.bin %> list-transactions user_id 1 --json | jq -r '.[0].id')" --json`,
  ]
  static override args = {id: Args.string({description: 'transaction id (GUID, as list-transactions shows it)', required: true})}

  async run(): Promise<Awaited<ReturnType<typeof transactionWithMember>>> {
    const tx = await transactionWithMember((await this.openStore()).db, this.args.id)
    this.say(`${transactionText(tx)}\n${formatRecord({member: `${tx.member.user_id} ${tx.member.name} <${tx.member.email}>`})}`)
    return tx
  }
}
