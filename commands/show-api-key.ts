import * as Args from '@oclif/core/args'
import {formatRecord} from '../src/lib/table.js'
import {showApiKey, type ApiKeyListItem} from '../src/interfaces/conversations/keys.js'
import {BaseCommand} from './base-command.js'

export default class ShowApiKey extends BaseCommand<typeof ShowApiKey> {
  static override description = 'Show one interface E API key: its client, methods, allowance, calls used this period and status; never the key itself'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> show-api-key key_0123…', '<%= config.bin %> show-api-key "$(<%= config.bin %> list-api-keys --json | jq -r \'.[0].id\')" --json']
  static override args = {key: Args.string({description: 'the key id (key_…, as list-api-keys shows it) or the key itself', required: true})}

  async run(): Promise<ApiKeyListItem> {
    const key = await showApiKey((await this.openStore()).db, this.args.key, this.clock.now())
    this.say(formatRecord({...key}))
    return key
  }
}
