import * as Args from '@oclif/core/args'
import {revokeApiKey} from '../src/interfaces/conversations/keys.js'
import {BaseCommand} from './base-command.js'

export default class RevokeApiKey extends BaseCommand<typeof RevokeApiKey> {
  static override description = 'Revoke one interface E API key: every call with it gets 401 from then on. Running it again changes nothing.'
  static override examples = ['<%= config.bin %> revoke-api-key key_0123…', '<%= config.bin %> revoke-api-key "$(<%= config.bin %> list-api-keys --json | jq -r \'.[0].id\')"']
  static override args = {key: Args.string({description: 'the key id (key_…, as list-api-keys shows it) or the key itself', required: true})}

  async run(): Promise<{id: string; client_id: string; revoked_at: string; already_revoked: boolean}> {
    // KEY may be the key itself: the trail names the key by its id only.
    const result = await this.audited(
      (store) => revokeApiKey(store.db, this.args.key, this.clock.now()),
      (revoked) => ({kind: 'api_key', target: revoked.id, changes: {revoked: true, already_revoked: revoked.already_revoked, client_id: revoked.client_id}}),
    )
    this.say(
      result.already_revoked
        ? `API key ${result.id} of ${result.client_id} was already revoked (at ${result.revoked_at}); nothing changed.`
        : `Revoked API key ${result.id} of ${result.client_id}; calls with it now get 401. (update-api-key ${result.id} --unrevoke reinstates it.)`,
    )
    return result
  }
}
