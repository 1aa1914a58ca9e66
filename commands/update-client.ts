import {Args, Flags} from '@oclif/core'
import {GRANTS, type ClientPatch, type Grant} from '../src/registry/schema.js'
import {updateClient, type ClientView} from '../src/registry/service.js'
import {BaseCommand, choicesFlag, secretFlag, stdinFlag} from './base-command.js'
import {clientRecord} from './output/registry.js'

export default class UpdateClient extends BaseCommand<typeof UpdateClient> {
  static override description = 'Change a client. --expire and --token-ttl end every token the client holds.'
  static override examples = [
    '<%= config.bin %> update-client 3f2a… --expire',
    '<%= config.bin %> update-client demo-client --token-ttl 3600',
    '<%= config.bin %> update-client 3f2a… --no-token-ttl',
  ]
  static override args = {id: Args.string({description: 'client_id', required: true})}

  static override flags = {
    name: Flags.string({description: 'company name'}),
    url: Flags.string({description: 'company URL'}),
    'logo-url': Flags.string({description: 'company logo URL'}),
    'redirect-uri': Flags.string({description: 'replace the redirect URIs (repeat or comma-separate)', multiple: true, delimiter: ','}),
    grant: choicesFlag(GRANTS, {description: 'replace the grants'}),
    admin: Flags.boolean({description: 'admin client (sees every pulse)', allowNo: true}),
    'token-ttl': Flags.integer({description: 'new access-token lifetime in seconds; revokes current tokens', min: 1, exclusive: ['no-token-ttl']}),
    'no-token-ttl': Flags.boolean({description: 'tokens no longer expire; revokes current tokens'}),
    expire: Flags.boolean({description: 'expire the client account: its tokens stop working at once', exclusive: ['unexpire']}),
    unexpire: Flags.boolean({description: 'reinstate an expired client (old tokens stay dead)'}),
    'partner-url': Flags.string({description: 'partner base URL, without /v1'}),
    'partner-username': Flags.string({description: 'HTTP Basic username for pushes'}),
    'partner-password': secretFlag('HTTP Basic password for pushes', 'MEDPANEL_PARTNER_PASSWORD'),
    'partner-password-stdin': stdinFlag('partner-password'),
    'signing-secret': secretFlag('secret for X-Medpanel-Signature', 'MEDPANEL_SIGNING_SECRET'),
  }

  async run(): Promise<ClientView & {revoked_tokens: number}> {
    const f = this.flags
    const patch: ClientPatch = {
      name: f.name,
      url: f.url,
      logo_url: f['logo-url'],
      redirect_uris: f['redirect-uri'],
      grants: f.grant as Grant[] | undefined,
      admin: f.admin,
      token_ttl: f['no-token-ttl'] ? null : f['token-ttl'],
      expire: f.expire ? true : f.unexpire ? false : undefined,
      partner_url: f['partner-url'],
      partner_username: f['partner-username'],
      partner_password: await this.secret(f['partner-password'], f['partner-password-stdin'], 'partner-password'),
      signing_secret: f['signing-secret'],
    }
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as ClientPatch
    if (Object.keys(defined).length === 0) this.error('nothing to change: give at least one flag (see --help)')
    const client = await updateClient((await this.openStore()).db, this.args.id, defined, this.clock.now())
    this.say(clientRecord(client))
    return client
  }
}
