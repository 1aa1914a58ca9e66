import {listSigningKeys, type SigningKeyView} from '../src/interfaces/signon/signing-key-list.js'
import {BaseCommand} from './base-command.js'
import {signingKeyTable} from './output/signing-keys.js'

export default class ListSigningKeys extends BaseCommand<typeof ListSigningKeys> {
  static override readsOnly = true
  static override description =
    'List the ID-token signing keys (never their private halves): current ones sign, published ones are retired but still at jwks_uri, expired ones go at the next rotate-signing-key'
  static override examples = ['<%= config.bin %> list-signing-keys', '<%= config.bin %> list-signing-keys --json | jq -r \'.[] | select(.status == "current") | .kid\'']

  async run(): Promise<SigningKeyView[]> {
    const keys = await listSigningKeys((await this.openStore()).reader, this.clock.now())
    this.say(signingKeyTable(keys))
    return keys
  }
}
