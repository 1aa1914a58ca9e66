import {Flags} from '@oclif/core'
import {deliveriesTable} from './output/partner.js'
import type {DeliveryView} from '../src/interfaces/partner/outbox.js'
import {DELIVERY_STATUSES, listDeliveries} from '../src/interfaces/partner/outbox.js'
import {BaseCommand, choiceFlag} from './base-command.js'

export default class ListDeliveries extends BaseCommand<typeof ListDeliveries> {
  static override description = 'Show the partner outbox: each delivery with its status, attempts, next attempt and last error'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-deliveries --status failed', '<%= config.bin %> list-deliveries --project-id P-100 --json']

  static override flags = {
    status: choiceFlag(DELIVERY_STATUSES, {description: 'only deliveries in this status'}),
    'project-id': Flags.string({description: 'only deliveries of this project'}),
    limit: Flags.integer({description: 'only the newest N', min: 1}),
  }

  async run(): Promise<DeliveryView[]> {
    const {db} = await this.openStore()
    const rows = await listDeliveries(db, {status: this.flags.status as DeliveryView['status'] | undefined, projectId: this.flags['project-id'], limit: this.flags.limit})
    this.say(deliveriesTable(rows))
    return rows
  }
}
