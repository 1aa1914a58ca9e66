import {listMembers, type MemberView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {memberTable} from './output/registry.js'

export default class ListMembers extends BaseCommand<typeof ListMembers> {
  static override description = 'List members'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-members', "<%= config.bin %> list-members --json | jq '.[].email'"]

  async run(): Promise<MemberView[]> {
    const members = await listMembers((await this.openStore()).db)
    this.say(members.length ? memberTable(members) : 'No members yet. Add one with add-member.')
    return members
  }
}
