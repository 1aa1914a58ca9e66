import {Args, Flags} from '@oclif/core'
import {parseMemberId, updateMember, type MemberView} from '../src/registry/service.js'
import {BaseCommand, secretFlag, stdinFlag} from './base-command.js'
import {memberRecord} from './output/registry.js'

export default class UpdateMember extends BaseCommand<typeof UpdateMember> {
  static override description = "Change a member's password or active state. Both end every token the member holds."
  static override examples = ['<%= config.bin %> update-member 3 --password "new-pass-123"', '<%= config.bin %> update-member 3 --deactivate']
  static override args = {id: Args.string({description: 'user_id', required: true})}

  static override flags = {
    password: secretFlag("new password (revokes the member's tokens)", 'MEDPANEL_MEMBER_PASSWORD'),
    'password-stdin': stdinFlag('password'),
    deactivate: Flags.boolean({description: 'mark the member inactive (revokes tokens)', exclusive: ['activate']}),
    activate: Flags.boolean({description: 'mark the member active again'}),
  }

  async run(): Promise<MemberView & {revoked_tokens: number}> {
    const f = this.flags
    if (f.password === undefined && !f.deactivate && !f.activate) this.error('nothing to change: give --password, --deactivate or --activate')
    const member = await updateMember(
      (await this.openStore()).db,
      parseMemberId(this.args.id),
      {password: await this.secret(f.password, f['password-stdin'], 'password'), active: f.deactivate ? false : f.activate ? true : undefined},
      this.clock.now(),
    )
    this.say(memberRecord(member))
    return member
  }
}
