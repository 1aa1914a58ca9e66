import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {METHODS, type ApiKeyPatch, type Method} from '../src/interfaces/conversations/schema.js'
import {updateApiKey, type ApiKeyView} from '../src/interfaces/conversations/keys.js'
import {formatRecord} from '../src/lib/table.js'
import {BaseCommand, choicesFlag} from './base-command.js'

export default class UpdateApiKey extends BaseCommand<typeof UpdateApiKey> {
  static override description = 'Change an interface E API key: allowance, subscription end, methods; --data-calls starts a fresh allowance'
  static override examples = [
    '<%= config.bin %> update-api-key mpk_demo_conversations_key --data-calls 100',
    '<%= config.bin %> update-api-key mpk_… --subscription-ends 2027-06-30T23:59:59Z',
    '<%= config.bin %> update-api-key key_0123… --revoke',
  ]
  static override args = {key: Args.string({description: 'the API key itself, or its id (key_…)', required: true})}

  static override flags = {
    'data-calls': Flags.integer({description: 'new data-call allowance, starting now', min: 0}),
    'subscription-ends': Flags.string({description: 'new subscription end (ISO 8601)', exclusive: ['no-subscription-end']}),
    'no-subscription-end': Flags.boolean({description: 'the subscription no longer ends'}),
    methods: choicesFlag(METHODS, {description: 'replace the allowed methods'}),
    'renew-days': Flags.integer({description: 'restore the allowance every N days', min: 1, exclusive: ['no-renew']}),
    'no-renew': Flags.boolean({description: 'the allowance no longer renews'}),
    revoke: Flags.boolean({description: 'revoke the key: calls with it get 401', exclusive: ['unrevoke']}),
    unrevoke: Flags.boolean({description: 'reinstate a revoked key'}),
  }

  async run(): Promise<ApiKeyView> {
    const f = this.flags
    const patch: ApiKeyPatch = {
      data_calls: f['data-calls'],
      subscription_ends: f['no-subscription-end'] ? null : f['subscription-ends'],
      methods: f.methods as Method[] | undefined,
      renew_days: f['no-renew'] ? null : f['renew-days'],
      revoke: f.revoke ? true : f.unrevoke ? false : undefined,
    }
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as ApiKeyPatch
    if (Object.keys(defined).length === 0) this.error('nothing to change: give at least one flag (see --help)')
    // KEY may be the key itself: the trail names the key by its id only.
    const key = await this.audited(
      (store) => updateApiKey(store.db, this.args.key, defined, this.clock.now()),
      (updated) => ({kind: 'api_key', target: updated.id, changes: {...defined, client_id: updated.client_id}}),
    )
    this.say(formatRecord({...key}))
    return key
  }
}
