import * as Args from '@oclif/core/args'
import {transactionText} from './output/balance.js'
import {STATUSES} from '../src/interfaces/balance/schema.js'
import {updateTransactionStatus, type TransactionView} from '../src/interfaces/balance/service.js'
import {transactionWithMember} from '../src/interfaces/balance/operator.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {ledgerNote} from './support/audit-notes.js'

export default class UpdateTransaction extends BaseCommand<typeof UpdateTransaction> {
  static override description =
    "Move a transaction to another status: Processing → Completed|Cancelled|OnHold, OnHold → Processing|Cancelled, Completed → Reversed. A withdrawal's fee follows it."
  static override examples = [
    '<%= config.bin %> update-transaction 6f1c… --status Completed',
    `<%= config.bin %> update-transaction "$(<%= config.bin %> list-transactions user_id 1 --json | jq -r '[.[] | select(.type == "WITHDRAWAL" and .status == "Processing")][0].id')" --status Completed`,
    '<%= config.bin %> update-transaction 6f1c… --status Cancelled --json',
  ]
  static override args = {id: Args.string({description: 'transaction id (GUID)', required: true})}
  static override asked = ['status']
  static override flags = {status: choiceFlag(STATUSES, {description: 'new status'})}

  async run(): Promise<TransactionView> {
    const status = await this.need(this.flags.status, 'status', `New status (${STATUSES.join(', ')})`)
    const {tx} = await this.audited(
      async (store) => {
        const updated = await updateTransactionStatus(store.db, this.args.id, status.trim(), this.clock.now())
        return {tx: updated, memberId: (await transactionWithMember(store.db, updated.id)).member.user_id}
      },
      (moved) => ledgerNote(moved.memberId, moved.tx),
    )
    this.say(transactionText(tx))
    return tx
  }
}
