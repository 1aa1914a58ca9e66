import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {addMember, type MemberView} from '../src/registry/service.js'
import {SECRET_CHANGED} from '../src/operator/audit.js'
import {SPECIALTIES, canonicalSpecialty, specialtyProblem} from '../src/registry/specialties.js'
import {BaseCommand, secretFlag, stdinFlag} from './base-command.js'
import {memberRecord} from './output/registry.js'

export default class AddMember extends BaseCommand<typeof AddMember> {
  static override description = 'Add a verified physician member who can sign in'
  static override examples = [
    '<%= config.bin %> add-member --email ana@clinic.example --password "s3cret-pass" --first-name Ana --last-name Ruiz --country US --specialty Oncology --npi 1987654328',
  ]

  static override asked = ['email', 'password', 'first-name', 'last-name', 'country', 'specialty']
  static override flags = {
    email: Flags.string({description: 'sign-in e-mail'}),
    password: secretFlag('sign-in password (at least 8 characters)', 'MEDPANEL_MEMBER_PASSWORD'),
    'password-stdin': stdinFlag('password'),
    'first-name': Flags.string({description: 'first name'}),
    'last-name': Flags.string({description: 'last name'}),
    country: Flags.string({description: 'country of practice, ISO 3166-1 alpha-2 (US); shown as country_of_practice'}),
    specialty: Flags.string({
      description: `primary specialty, one of (any case): ${SPECIALTIES.join(', ')}; shown as primary_specialty`,
    }),
    npi: Flags.string({description: 'US National Provider Identifier (10 digits, check digit verified)'}),
    me: Flags.string({description: 'AMA ME number'}),
  }

  async run(): Promise<MemberView> {
    const f = this.flags
    const email = await this.need(f.email, 'email', 'E-mail')
    const askPassword = async () => (await import('@inquirer/prompts')).password({message: 'Password', mask: true})
    const given = await this.secret(f.password, f['password-stdin'], 'password')
    const password = given ?? (this.canPrompt() ? await askPassword() : await this.need(undefined, 'password', ''))
    // Every answer is in (and the specialty checked) before the store is opened or made.
    const input = {
      email,
      password,
      first_name: await this.need(f['first-name'], 'first-name', 'First name'),
      last_name: await this.need(f['last-name'], 'last-name', 'Last name'),
      country: await this.need(f.country, 'country', 'Country of practice (ISO alpha-2)'),
      specialty: await this.specialty(f.specialty),
      npi: f.npi ?? null,
      me: f.me ?? null,
    }
    const member = await this.audited(
      (store) => addMember(store.db, input, this.clock.now()),
      ({user_id, created_at: _created, updated_at: _updated, ...fields}) => ({kind: 'member', target: user_id, changes: {...fields, password: SECRET_CHANGED}}),
    )
    this.say(memberRecord(member))
    return member
  }

  /** The specialty as the list spells it; a value off the list is refused (or asked again at a terminal). */
  private async specialty(given: string | undefined): Promise<string> {
    const value = await this.need(given, 'specialty', 'Primary specialty', (v) => specialtyProblem(v) ?? true)
    const problem = specialtyProblem(value)
    if (problem) throw new AppError('bad_request', `--specialty: ${problem}`)
    return canonicalSpecialty(value)!
  }
}
