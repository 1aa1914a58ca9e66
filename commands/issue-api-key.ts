import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {METHODS, type Method} from '../src/interfaces/conversations/schema.js'
import {issueApiKey, type ApiKeyView} from '../src/interfaces/conversations/keys.js'
import {formatRecord} from '../src/lib/table.js'
import {SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand, choicesFlag} from './base-command.js'

export default class IssueApiKey extends BaseCommand<typeof IssueApiKey> {
  static override description = 'Issue an interface E API key to a client with the conversations grant; the key is shown only once'
  static override examples = [
    '<%= config.bin %> issue-api-key demo-client',
    '<%= config.bin %> issue-api-key 3f2a… --methods summary --data-calls 0',
    '<%= config.bin %> issue-api-key 3f2a… --data-calls 500 --renew-days 30 --subscription-ends 2027-01-01T00:00:00Z --json',
  ]
  static override args = {client: Args.string({description: 'client_id of the key owner', required: true})}

  static override flags = {
    methods: choicesFlag(METHODS, {description: 'methods the key may call (repeat or comma-separate)'}),
    'data-calls': Flags.integer({description: 'data-call allowance', default: 1000, min: 0}),
    'renew-days': Flags.integer({description: 'restore the allowance every N days (default: never renews)', min: 1}),
    'subscription-ends': Flags.string({description: 'when the subscription ends (ISO 8601); calls after it get 402'}),
  }

  async run(): Promise<ApiKeyView & {api_key: string}> {
    const f = this.flags
    const input = {
      client_id: this.args.client,
      methods: f.methods as Method[] | undefined,
      data_calls: f['data-calls'],
      renew_days: f['renew-days'] ?? null,
      subscription_ends: f['subscription-ends'] ?? null,
    }
    const key = await this.audited(
      (store) => issueApiKey(store.db, input, this.clock.now()),
      (issued) => ({
        kind: 'api_key',
        target: issued.id,
        changes: {
          api_key: SECRET_CHANGED,
          client_id: issued.client_id,
          methods: issued.methods,
          data_calls: issued.data_call_allowance,
          renew_days: issued.renew_days,
          subscription_ends: issued.subscription_ends_at,
        },
      }),
    )
    this.say(`${formatRecord({...key})}\n\nStore the api_key now: it is not shown again.`)
    return key
  }
}
