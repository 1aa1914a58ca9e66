import {endEverySession} from '../src/interfaces/signon/sessions.js'
import {rotateSecretKey, type Rotation} from '../src/store/key-rotation.js'
import {BaseCommand} from './base-command.js'

export default class RotateSecretKey extends BaseCommand<typeof RotateSecretKey> {
  static override description =
    'Seal every stored partner password, signing secret and ID-token signing key under a new key (the key file beside the store, or the first key of MEDPANEL_SECRET_KEY), and sign every member out of the consent pages'
  static override examples = ['<%= config.bin %> rotate-secret-key --db ./medpanel.db']

  async run(): Promise<Rotation & {ended_sessions: number}> {
    const store = await this.openStore()
    const {db} = store
    const rotation = await rotateSecretKey(store)
    // The cookie key derives from the store key: whoever had the old one could sign cookies, so
    // every session ends now, in every serve at once (they live in the store).
    const ended = await endEverySession(db, this.clock.now())
    this.say(
      `Re-sealed ${rotation.resealed} secret(s) under key ${rotation.key_id} (${rotation.key_source}).${rotation.retired_key_ids.length ? ` Retired: ${rotation.retired_key_ids.join(', ')}.` : ''} Signed out ${ended} sign-in session(s).`,
    )
    return {...rotation, ended_sessions: ended}
  }
}
