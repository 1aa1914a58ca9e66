import {listClients, type ClientView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {pageOf, pagingFlags, sayMore} from './output/paging.js'
import {clientTable} from './output/registry.js'

export default class ListClients extends BaseCommand<typeof ListClients> {
  static override description = 'List registered clients (never their secrets), oldest first, 100 at a time unless told'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> list-clients',
    '<%= config.bin %> list-clients --json | jq -r ".[].client_id"',
    '<%= config.bin %> list-clients --limit 20 --offset 20',
  ]
  static override flags = {...pagingFlags('clients')}

  async run(): Promise<ClientView[]> {
    // Clients are few (one per partner or app): read whole, paged here.
    const {rows, total} = pageOf(await listClients((await this.openStore()).db), this.flags)
    this.say(rows.length ? clientTable(rows) : total ? `No clients at offset ${this.flags.offset} (${total} in all).` : 'No clients yet. Add one with register-client.')
    sayMore('clients', this.flags, rows.length, total)
    return rows
  }
}
