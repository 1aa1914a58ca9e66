import {rotateSigningKeys, type SigningKeyRotation} from '../src/interfaces/signon/signing-keys.js'
import {BaseCommand} from './base-command.js'
import {rotationText} from './output/signing-keys.js'

export default class RotateSigningKey extends BaseCommand<typeof RotateSigningKey> {
  static override description =
    'Start new ID-token signing keys (OpenID Connect), one per algorithm, which every serve on the store signs with from its next ID token; the keys they replace sign nothing more and stay published at jwks_uri until the last ID token they signed has expired'
  static override examples = ['<%= config.bin %> rotate-signing-key', '<%= config.bin %> rotate-signing-key --db ./medpanel.db --json']

  async run(): Promise<SigningKeyRotation> {
    const rotation = await rotateSigningKeys((await this.openStore()).db, this.clock.now())
    this.say(rotationText(rotation))
    return rotation
  }
}
