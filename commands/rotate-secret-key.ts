import {rotateSecretKey, type Rotation} from '../src/store/key-rotation.js'
import {BaseCommand} from './base-command.js'

export default class RotateSecretKey extends BaseCommand<typeof RotateSecretKey> {
  static override description =
    'Seal every stored partner password and signing secret under a new key (the key file beside the store, or the first key of MEDPANEL_SECRET_KEY); members sign in again afterwards'
  static override examples = ['<%= config.bin %> rotate-secret-key --db ./medpanel.db']

  async run(): Promise<Rotation> {
    const rotation = await rotateSecretKey((await this.openStore()).db)
    this.say(
      `Re-sealed ${rotation.resealed} secret(s) under key ${rotation.key_id} (${rotation.key_source}).${rotation.retired_key_ids.length ? ` Retired: ${rotation.retired_key_ids.join(', ')}.` : ''}`,
    )
    return rotation
  }
}
