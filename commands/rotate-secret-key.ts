import {endEverySession} from '../src/interfaces/signon/sessions.js'
import {rotateSecretKey, type Rotation} from '../src/store/key-rotation.js'
import {SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand} from './base-command.js'

export default class RotateSecretKey extends BaseCommand<typeof RotateSecretKey> {
  static override description =
    'Seal every stored partner password, signing secret and ID-token signing key under a new key (the key file beside the store, or the first key of MEDPANEL_SECRET_KEY), and sign every member out of the consent pages'
  static override examples = ['<%= config.bin %> rotate-secret-key --db ./medpanel.db']

  async run(): Promise<Rotation & {ended_sessions: number}> {
    const store = await this.openStore()
    const rotation = await rotateSecretKey(store)
    // The cookie key derives from the store key: whoever had the old one could sign cookies, so
    // every session ends now, in every serve at once (they live in the store). The trail records
    // the rotation with that last transaction: the re-sealing before it is done by then.
    const ended = await this.audited(
      (parts) => endEverySession(parts.db, this.clock.now()),
      (sessions) => ({
        kind: 'store_key',
        target: rotation.key_id,
        changes: {store_key: SECRET_CHANGED, retired_key_ids: rotation.retired_key_ids, resealed: rotation.resealed, ended_sessions: sessions},
      }),
    )
    this.say(
      `Re-sealed ${rotation.resealed} secret(s) under key ${rotation.key_id} (${rotation.key_source}).${rotation.retired_key_ids.length ? ` Retired: ${rotation.retired_key_ids.join(', ')}.` : ''} Signed out ${ended} sign-in session(s).`,
    )
    return {...rotation, ended_sessions: ended}
  }
}
