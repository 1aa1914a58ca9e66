import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {parseMemberId, revokeConsent} from '../src/registry/service.js'
import {BaseCommand} from './base-command.js'

export default class RevokeConsent extends BaseCommand<typeof RevokeConsent> {
  static override description = "Withdraw a member's consent for a client: its tokens for that member die and pending codes expire"
  static override examples = ['<%= config.bin %> revoke-consent 1 --client demo-client']
  static override args = {member: Args.string({description: 'user_id of the member', required: true})}
  static override flags = {client: Flags.string({description: 'client_id', required: true})}

  async run(): Promise<{user_id: number; client_id: string; revoked_tokens: number}> {
    const result = await this.audited(
      (store) => revokeConsent(store.db, parseMemberId(this.args.member), this.flags.client, this.clock.now()),
      (revoked) => ({kind: 'member', target: revoked.user_id, changes: {consent_revoked: revoked.client_id, revoked_tokens: revoked.revoked_tokens}}),
    )
    this.say(`Revoked ${result.revoked_tokens} token(s) of member ${result.user_id} for client ${result.client_id}.`)
    return result
  }
}
