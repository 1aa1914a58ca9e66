import * as Flags from '@oclif/core/flags'
import {rotateSigningKeys, type SigningKeyRotation} from '../src/interfaces/signon/signing-keys.js'
import {BaseCommand} from './base-command.js'
import {rotationText} from './output/signing-keys.js'

export default class RotateSigningKey extends BaseCommand<typeof RotateSigningKey> {
  static override description =
    'Start new ID-token signing keys (OpenID Connect), one per algorithm: published at jwks_uri at once, they sign from ten minutes later (every relying party has fetched them by then); the keys they replace stop signing then and stay published until the last ID token they signed has expired'
  static override examples = [
    '<%= config.bin %> rotate-signing-key',
    '<%= config.bin %> rotate-signing-key --db ./medpanel.db --json',
    '<%= config.bin %> rotate-signing-key --now',
  ]
  static override flags = {
    now: Flags.boolean({
      description: 'switch at once (a key leaked): the old keys sign nothing more from now; relying parties fetch the key set again when they meet the new kid',
      default: false,
    }),
  }

  async run(): Promise<SigningKeyRotation> {
    const rotation = await this.audited(
      (store) => rotateSigningKeys(store, this.clock.now(), {immediately: this.flags.now}),
      (made) => ({
        kind: 'signing_keys',
        target: made.current.map((key) => key.alg).join(','),
        changes: {immediately: this.flags.now, new_kids: made.current.map((key) => key.kid), retired_kids: made.retired.map((key) => key.kid)},
      }),
    )
    this.say(rotationText(rotation))
    return rotation
  }
}
