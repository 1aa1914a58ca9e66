import {printableUrl} from '../src/store/postgres/open.js'
import {storeFile} from '../src/store/handle.js'
import {storeStatus, type StoreStatus} from '../src/status.js'
import {BaseCommand} from './base-command.js'
import {statusText} from './output/status.js'

export default class Status extends BaseCommand<typeof Status> {
  static override description =
    'Show the store at a glance: schema and pending migrations, counts, total balance, partner outbox, API keys near their allowance, size. Only reads: never migrates, works beside a running serve and on a read-only store'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --json | jq ".schema.pending, .outbox.partners"']

  async run(): Promise<StoreStatus> {
    const store = await this.openStore({inspect: true})
    const url = (this.flags as {'database-url'?: string})['database-url']
    const location = store.kind === 'postgres' && url ? printableUrl(url) : (storeFile(store.db) ?? 'memory')
    const status = await storeStatus(store.db, this.clock.now(), location)
    this.say(statusText(status))
    return status
  }
}
