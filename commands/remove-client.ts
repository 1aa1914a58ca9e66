import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {dependentsText, removeClient, type ClientDependents} from '../src/operator/queries.js'
import {BaseCommand} from './base-command.js'

export default class RemoveClient extends BaseCommand<typeof RemoveClient> {
  static override description =
    'Remove a client. Refused while it has access tokens, authorization codes, API keys, pulses, undelivered partner deliveries or projects listing it as a partner; --force removes those with it (delivered history and ledger entries stay). update-client --expire disables a client and keeps everything.'
  static override examples = [
    '<%= config.bin %> remove-client 3f2a…',
    '<%= config.bin %> remove-client 3f2a… --force --json',
    '<%= config.bin %> remove-client "$(<%= config.bin %> register-client --name Trial --url https://trial.example --logo-url https://trial.example/l.png --grant balance --json | jq -r .client_id)"',
  ]
  static override args = {id: Args.string({description: 'client_id', required: true})}
  static override flags = {
    force: Flags.boolean({
      description: 'also remove its tokens, codes, API keys (and their call log), pulses (with respondents and answers) and undelivered deliveries, and take it off projects',
      default: false,
    }),
  }

  async run(): Promise<{client_id: string; removed: ClientDependents}> {
    const result = await this.audited(
      (store) => removeClient(store.db, this.args.id, this.flags.force),
      (removed) => ({kind: 'client', target: removed.client_id, changes: {removed: true, force: this.flags.force, with: removed.removed}}),
    )
    const what = dependentsText(result.removed)
    this.say(`Removed client ${result.client_id}${what ? ` with ${what}` : ''}.`)
    return result
  }
}
