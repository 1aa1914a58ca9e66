import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {parseMemberId, updateMember, type MemberView} from '../src/registry/service.js'
import {SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand, changedSecretFlag, fromEnvFlag, stdinFlag} from './base-command.js'
import {memberRecord} from './output/registry.js'

export default class UpdateMember extends BaseCommand<typeof UpdateMember> {
  static override description =
    "Change a member's password or active state. Both end every token the member holds. The password changes only when --password, --password-stdin or --password-from-env is given: an exported $MEDPANEL_MEMBER_PASSWORD alone changes nothing."
  static override examples = [
    '<%= config.bin %> update-member 3 --deactivate',
    '<%= config.bin %> update-member 3 --activate',
    "printf %s 'new-pass-123' | <%= config.bin %> update-member 3 --password-stdin",
    "MEDPANEL_MEMBER_PASSWORD='new-pass-456' <%= config.bin %> update-member 3 --password-from-env",
  ]
  static override args = {id: Args.string({description: 'user_id', required: true})}

  static override flags = {
    password: changedSecretFlag("new password (revokes the member's tokens)", 'password', 'MEDPANEL_MEMBER_PASSWORD'),
    'password-stdin': stdinFlag('password'),
    'password-from-env': fromEnvFlag('password', 'MEDPANEL_MEMBER_PASSWORD'),
    deactivate: Flags.boolean({description: 'mark the member inactive (revokes tokens)', exclusive: ['activate']}),
    activate: Flags.boolean({description: 'mark the member active again'}),
  }

  async run(): Promise<MemberView & {revoked_tokens: number}> {
    const f = this.flags
    if (f.password === undefined && !f['password-stdin'] && !f['password-from-env'] && !f.deactivate && !f.activate) {
      this.error('nothing to change: give --password (or --password-stdin, --password-from-env), --deactivate or --activate')
    }
    const password = await this.secret(f.password, f['password-stdin'], 'password', {env: 'MEDPANEL_MEMBER_PASSWORD', given: f['password-from-env']})
    const change = {password, active: f.deactivate ? false : f.activate ? true : undefined}
    const member = await this.audited(
      (store) => updateMember(store.db, parseMemberId(this.args.id), change, this.clock.now()),
      (updated) => ({
        kind: 'member',
        target: updated.user_id,
        changes: {password: password === undefined ? undefined : SECRET_CHANGED, active: change.active, revoked_tokens: updated.revoked_tokens},
      }),
    )
    this.say(memberRecord(member))
    return member
  }
}
