import * as Args from '@oclif/core/args'
import {getClient, type ClientView} from '../src/registry/views.js'
import {pageApiKeys, type ApiKeyListItem} from '../src/interfaces/conversations/keys.js'
import {BaseCommand} from './base-command.js'
import {apiKeysTable} from './output/operator.js'
import {clientRecord} from './output/registry.js'

/** More keys than this on one client is unusual; list-api-keys --client pages through them all. */
const KEYS_SHOWN = 50

export default class ShowClient extends BaseCommand<typeof ShowClient> {
  static override description = 'Show one client (never its secret) with its interface E API keys (never the keys themselves)'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> show-client demo-client --db ./medpanel-demo.db']
  static override args = {id: Args.string({description: 'client_id', required: true})}

  async run(): Promise<ClientView & {api_keys: ApiKeyListItem[]}> {
    const {db} = await this.openStore()
    const client = await getClient(db, this.args.id)
    const keys = await pageApiKeys(db, {clientId: client.client_id, limit: KEYS_SHOWN, offset: 0}, this.clock.now())
    const more = keys.total - keys.rows.length
    this.say(
      `${clientRecord(client)}\n\n${keys.rows.length ? `API keys:\n${apiKeysTable(keys.rows)}` : 'API keys: none'}${more > 0 ? `\n(${more} more: list-api-keys --client ${client.client_id} --offset ${keys.rows.length})` : ''}`,
    )
    return {...client, api_keys: keys.rows}
  }
}
