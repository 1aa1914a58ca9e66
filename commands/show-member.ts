import * as Args from '@oclif/core/args'
import {getMember, parseMemberId, type MemberView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {memberRecord} from './output/registry.js'

export default class ShowMember extends BaseCommand<typeof ShowMember> {
  static override description = 'Show one member'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> show-member 1 --db ./medpanel-demo.db']
  static override args = {id: Args.string({description: 'user_id', required: true})}

  async run(): Promise<MemberView> {
    const member = await getMember((await this.openStore()).db, parseMemberId(this.args.id))
    this.say(memberRecord(member))
    return member
  }
}
