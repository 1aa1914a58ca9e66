import * as Args from '@oclif/core/args'
import {rotateClientSecret} from '../src/registry/service.js'
import {SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand} from './base-command.js'

export default class RotateClientSecret extends BaseCommand<typeof RotateClientSecret> {
  static override description = 'Issue a new client_secret; the old one stops working at once'
  static override examples = ['<%= config.bin %> rotate-client-secret demo-client --db ./medpanel-demo.db']
  static override args = {id: Args.string({description: 'client_id', required: true})}

  async run(): Promise<{client_id: string; client_secret: string}> {
    const result = await this.audited(
      (store) => rotateClientSecret(store.db, this.args.id, this.clock.now()),
      (rotated) => ({kind: 'client', target: rotated.client_id, changes: {client_secret: SECRET_CHANGED}}),
    )
    this.say(`client_id      ${result.client_id}\nclient_secret  ${result.client_secret}\n\nStore the secret now: it is not shown again.`)
    return result
  }
}
