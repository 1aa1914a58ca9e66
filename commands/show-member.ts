import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {getMemberBy, getMemberNamed, parseMemberName, type MemberView} from '../src/registry/views.js'
import {BaseCommand} from './base-command.js'
import {memberRecord} from './output/registry.js'

export default class ShowMember extends BaseCommand<typeof ShowMember> {
  static override description = 'Show one member, by user_id, e-mail or NPI'
  static override readsOnly = true
  static override examples = [
    '<%= config.bin %> show-member 1 --db ./medpanel-demo.db',
    '<%= config.bin %> show-member demo.doctor@medpanel.test --db ./medpanel-demo.db',
    '<%= config.bin %> show-member 1234567893 --db ./medpanel-demo.db   # an NPI',
    '<%= config.bin %> show-member --email ana@clinic.example',
    '<%= config.bin %> show-member --npi 1987654328 --json',
  ]
  static override args = {
    id: Args.string({
      description:
        'the member: a user_id, an e-mail (has an @) or an NPI (10 digits with a valid check digit, tried before a user_id of the same digits); or give --email or --npi instead',
    }),
  }
  static override flags = {
    email: Flags.string({description: "the member's sign-in e-mail (any case)", exclusive: ['npi']}),
    npi: Flags.string({description: "the member's NPI", exclusive: ['email']}),
  }

  async run(): Promise<MemberView> {
    const {email, npi} = this.flags
    const given = [this.args.id, email, npi].filter((v) => v !== undefined).length
    if (given !== 1) throw new AppError('bad_request', 'name the member one way: a user_id, e-mail or NPI as the argument, --email or --npi')
    // Checked before the store is opened: a value that names nobody is a typing mistake.
    const named = this.args.id !== undefined ? parseMemberName(this.args.id) : undefined
    const db = (await this.openStore()).db
    const member = named !== undefined ? await getMemberNamed(db, named) : email !== undefined ? await getMemberBy(db, 'email', email) : await getMemberBy(db, 'npi', npi!)
    this.say(memberRecord(member))
    return member
  }
}
