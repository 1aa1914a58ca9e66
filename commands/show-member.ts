import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {getMember, getMemberBy, parseMemberId, type MemberView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {memberRecord} from './output/registry.js'

export default class ShowMember extends BaseCommand<typeof ShowMember> {
  static override description = 'Show one member, by user_id, e-mail or NPI'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> show-member 1 --db ./medpanel-demo.db',
    '<%= config.bin %> show-member --email ana@clinic.example',
    '<%= config.bin %> show-member --npi 1987654328 --json',
  ]
  static override args = {id: Args.string({description: 'user_id (or give --email or --npi instead)'})}
  static override flags = {
    email: Flags.string({description: "the member's sign-in e-mail (any case)", exclusive: ['npi']}),
    npi: Flags.string({description: "the member's NPI", exclusive: ['email']}),
  }

  async run(): Promise<MemberView> {
    const {email, npi} = this.flags
    const given = [this.args.id, email, npi].filter((v) => v !== undefined).length
    if (given !== 1) throw new AppError('bad_request', 'name the member one way: a user_id, --email or --npi')
    const db = (await this.openStore()).db
    const member =
      this.args.id !== undefined
        ? await getMember(db, parseMemberId(this.args.id))
        : email !== undefined
          ? await getMemberBy(db, 'email', email)
          : await getMemberBy(db, 'npi', npi!)
    this.say(memberRecord(member))
    return member
  }
}
