import * as Flags from '@oclif/core/flags'
import {deliveriesTable} from './output/partner.js'
import type {DeliveryView} from '../src/interfaces/partner/outbox.js'
import {DELIVERY_STATUSES} from '../src/interfaces/partner/outbox.js'
import {pageDeliveries} from '../src/interfaces/partner/projects.js'
import {BaseCommand, choiceFlag} from './base-command.js'
import {pagingFlags, sinceFlag} from './output/paging.js'

export default class ListDeliveries extends BaseCommand<typeof ListDeliveries> {
  static override description =
    'Show the partner outbox: each delivery with its status, attempts, next attempt and last error; the newest 100 unless told (--offset pages back to older ones)'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> list-deliveries --status failed',
    '<%= config.bin %> list-deliveries --project-id P-100 --json',
    '<%= config.bin %> list-deliveries --since 2026-01-01 --limit 20 --offset 20',
  ]

  static override flags = {
    status: choiceFlag(DELIVERY_STATUSES, {description: 'only deliveries in this status'}),
    'project-id': Flags.string({description: 'only deliveries of this project'}),
    since: sinceFlag('deliveries queued'),
    ...pagingFlags('deliveries, newest first'),
  }

  async run(): Promise<DeliveryView[]> {
    const f = this.flags
    const {db} = await this.openStore()
    const {rows, total} = await pageDeliveries(db, {
      status: f.status as DeliveryView['status'] | undefined,
      ...(f['project-id'] ? {projectId: f['project-id']} : {}),
      ...(f.since ? {since: f.since} : {}),
      limit: f.limit,
      offset: f.offset,
    })
    this.say(deliveriesTable(rows))
    const older = total - f.offset - rows.length
    if (older > 0) process.stderr.write(`${older} older deliveries not shown (${total} in all); see them with --offset ${f.offset + rows.length}\n`)
    return rows
  }
}
