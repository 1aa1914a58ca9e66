import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {retryDeliveries, type RetryResult} from '../src/interfaces/partner/outbox.js'
import {BaseCommand} from './base-command.js'

export default class RetryDeliveries extends BaseCommand<typeof RetryDeliveries> {
  static override description = 'Put failed deliveries back in the queue (a running serve sends them; or run a push with --wait)'
  static override examples = ['<%= config.bin %> retry-deliveries --failed', '<%= config.bin %> retry-deliveries --id 5b0c…,9e21…']

  static override flags = {
    id: Flags.string({description: 'delivery ids (repeat or comma-separate)', multiple: true, delimiter: ',', exclusive: ['failed']}),
    failed: Flags.boolean({description: 'every failed delivery', default: false}),
  }

  async run(): Promise<RetryResult> {
    if (!this.flags.failed && !this.flags.id?.length) throw new AppError('bad_request', 'missing required flag --id or --failed')
    const result = await this.audited(
      (parts) => retryDeliveries(parts.db, {ids: this.flags.id, allFailed: this.flags.failed}, this.clock.now()),
      (retried) => ({
        kind: 'deliveries',
        target: this.flags.failed ? 'failed' : (this.flags.id ?? []).join(','),
        changes: {requeued: retried.requeued, superseded: retried.superseded},
      }),
    )
    this.say(`Re-queued ${result.requeued.length} ${result.requeued.length === 1 ? 'delivery' : 'deliveries'}.`)
    if (result.superseded.length) this.say(`Skipped ${result.superseded.length} replaced by a newer PUT of the same resource (marked superseded).`)
    return result
  }
}
