import {Args} from '@oclif/core'
import {getClient, type ClientView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {clientRecord} from './output/registry.js'

export default class ShowClient extends BaseCommand<typeof ShowClient> {
  static override description = 'Show one client (never its secret)'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> show-client demo-client --db ./medpanel-demo.db']
  static override args = {id: Args.string({description: 'client_id', required: true})}

  async run(): Promise<ClientView> {
    const client = await getClient((await this.openStore()).db, this.args.id)
    this.say(clientRecord(client))
    return client
  }
}
