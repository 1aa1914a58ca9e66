import * as Flags from '@oclif/core/flags'
import {issueRegistrationToken, type IssuedRegistrationToken} from '../src/registry/dynamic-registration.js'
import {BaseCommand} from './base-command.js'

export default class IssueRegistrationToken extends BaseCommand<typeof IssueRegistrationToken> {
  static override description =
    'Issue an initial access token for dynamic client registration (RFC 7591, POST /oauth/register); the token is shown only once. Registration is open, and discovery names registration_endpoint, while at least one such token is live'
  static override examples = ['<%= config.bin %> issue-registration-token', '<%= config.bin %> issue-registration-token --expires-in 86400 --uses 1 --json']

  static override flags = {
    'expires-in': Flags.integer({description: 'seconds until the token expires (default: never)', min: 1}),
    uses: Flags.integer({description: 'how many clients the token may register (default: any number)', min: 1}),
  }

  async run(): Promise<IssuedRegistrationToken> {
    const token = await issueRegistrationToken((await this.openStore()).db, {expiresInSeconds: this.flags['expires-in'], uses: this.flags.uses}, this.clock.now())
    this.say(
      `initial_access_token  ${token.initial_access_token}\nexpires_at            ${token.expires_at ?? 'never'}\nuses                  ${token.uses ?? 'any'}\n\nStore the token now: it is not shown again.`,
    )
    return token
  }
}
