import {listClients, type ClientView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {clientTable} from './output/registry.js'

export default class ListClients extends BaseCommand<typeof ListClients> {
  static override description = 'List registered clients (never their secrets)'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-clients', '<%= config.bin %> list-clients --json | jq -r ".[].client_id"']

  async run(): Promise<ClientView[]> {
    const clients = await listClients((await this.openStore()).db)
    this.say(clients.length ? clientTable(clients) : 'No clients yet. Add one with register-client.')
    return clients
  }
}
