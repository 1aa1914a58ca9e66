import * as Args from '@oclif/core/args'
import {withdrawalTypesText} from './output/balance.js'
import {ACCOUNT_KEYS} from '../src/interfaces/balance/schema.js'
import {listWithdrawalTypes, resolveAccountHolder, type WithdrawalTypeView} from '../src/interfaces/balance/service.js'
import {BaseCommand} from './base-command.js'

export default class ListWithdrawalTypes extends BaseCommand<typeof ListWithdrawalTypes> {
  static override description = 'List withdrawal types with fees, minimums and member-detail fields; with KEY ID, only those the person may use'
  static override readsOnly = true
  static override examples = ['<%= config.bin %> list-withdrawal-types', '<%= config.bin %> list-withdrawal-types user_id 1 --json']
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS]}),
    id: Args.string({description: 'user_id, NPI or AMA ME number'}),
  }

  async run(): Promise<WithdrawalTypeView[]> {
    const {db} = await this.openStore()
    if (this.args.key !== undefined && this.args.id === undefined) this.error('give both KEY and ID, or neither')
    const member = this.args.key && this.args.id ? await resolveAccountHolder(db, this.args.key, this.args.id) : undefined
    const types = await listWithdrawalTypes(db, member)
    this.say(withdrawalTypesText(types))
    return types
  }
}
