import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {restrictionText} from './output/balance.js'
import {ACCOUNT_KEYS} from '../src/interfaces/balance/schema.js'
import {resolveAccountHolder, restrictWithdrawalType, type RestrictionResult} from '../src/interfaces/balance/service.js'
import {BaseCommand} from './base-command.js'

export default class RestrictWithdrawalType extends BaseCommand<typeof RestrictWithdrawalType> {
  static override description = 'Bar a person from a withdrawal type (the API then answers 403 for it), or lift the bar with --lift'
  static override examples = ['<%= config.bin %> restrict-withdrawal-type user_id 1 --type CHECK', '<%= config.bin %> restrict-withdrawal-type user_id 1 --type CHECK --lift']
  static override args = {
    key: Args.string({description: 'how ID identifies the person', options: [...ACCOUNT_KEYS], required: true}),
    id: Args.string({description: 'user_id, NPI or AMA ME number', required: true}),
  }
  static override asked = ['type']
  static override flags = {
    type: Flags.string({description: 'withdrawal type code, e.g. CHECK'}),
    lift: Flags.boolean({description: 'allow the type again', default: false}),
  }

  async run(): Promise<RestrictionResult> {
    const type = await this.need(this.flags.type, 'type', 'Withdrawal type code (e.g. CHECK)')
    const {db} = await this.openStore()
    const member = await resolveAccountHolder(db, this.args.key, this.args.id)
    const result = await this.audited(
      (store) => restrictWithdrawalType(store.db, member, type, this.flags.lift, this.clock.now()),
      (restriction) => ({kind: 'account', target: member.id, changes: {withdrawal_type: restriction.type, restricted: restriction.restricted}}),
    )
    this.say(restrictionText(result))
    return result
  }
}
