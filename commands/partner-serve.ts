import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {composePartner} from '../src/compose.js'
import {untilSignal} from '../src/server.js'
import {createLogger} from '../src/lib/log.js'
import {keyOfStandardSecret} from '../src/interfaces/partner/signatures.js'
import {BaseCommand, logFormatFlag, secretFlag, stdinFlag} from './base-command.js'

/** Where the reference partner keeps what it receives unless --db says otherwise. */
const DEFAULT_PARTNER_FILE = './partner.db'

export default class PartnerServe extends BaseCommand<typeof PartnerServe> {
  static override description = 'Run a reference partner: every interface B endpoint under /v1, storing what it receives in its own SQLite file'
  static override examples = [
    '<%= config.bin %> partner-serve --port 9090 --username acme --password s3cret --db ./partner.db',
    '<%= config.bin %> partner-serve --port 0 --username u --password p --db /tmp/partner.db --json',
  ]

  // The partner plays another company's system: it keeps its own file, never medpanel's store.
  static override baseFlags = {
    ...BaseCommand.baseFlags,
    db: Flags.string({description: "the partner's own SQLite file", default: DEFAULT_PARTNER_FILE, helpGroup: 'STORE'}),
  }

  static override asked = ['username', 'password']
  static override flags = {
    port: Flags.integer({description: 'TCP port (0 picks a free one)', default: 9090, min: 0, max: 65535}),
    host: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    username: Flags.string({description: 'HTTP Basic username medpanel must send'}),
    password: secretFlag('HTTP Basic password medpanel must send', 'MEDPANEL_PARTNER_SERVE_PASSWORD'),
    'password-stdin': stdinFlag('password', {exclusive: ['signing-secret-stdin']}),
    'signing-secret': secretFlag(
      "refuse writes not signed with this Standard Webhooks secret (whsec_…, as register-client prints it for the client's signing secret)",
      'MEDPANEL_PARTNER_SERVE_SIGNING_SECRET',
    ),
    'signing-secret-stdin': stdinFlag('signing-secret', {exclusive: ['password-stdin']}),
    'log-format': logFormatFlag(),
  }

  async run(): Promise<void> {
    const flags = this.flags
    // The partner keeps no PostgreSQL store: --database-url on its command line is refused in one
    // line, and MEDPANEL_DATABASE_URL (which the operator's medpanel commands may well share this
    // shell with) is not for it, so it is ignored rather than refused.
    if (this.argv.some((arg) => arg === '--database-url' || arg.startsWith('--database-url='))) {
      throw new AppError('bad_request', `partner-serve keeps its own SQLite file and takes no --database-url; give that file with --db PATH (default ${DEFAULT_PARTNER_FILE})`)
    }
    const username = await this.need(flags.username, 'username', 'Basic username partners must send')
    const password = await this.need(await this.secret(flags.password, flags['password-stdin'], 'password'), 'password', 'Basic password partners must send')
    const signingKey = signingKeyOf(await this.secret(flags['signing-secret'], flags['signing-secret-stdin'], 'signing-secret'))
    // Listening for SIGINT/SIGTERM before the ready line, as serve does: a stop right after it is graceful.
    const signalled = untilSignal()
    const logFormat = this.logFormat()
    const file = flags.db ?? DEFAULT_PARTNER_FILE
    const partner = await composePartner({file, username, password, clock: this.clock, listen: {port: flags.port, host: flags.host}, logFormat, signingKey})
    try {
      const {server} = partner
      if (this.jsonEnabled()) this.logJson({url: server.url, base_url: server.url, db: flags.db})
      else {
        const text = `reference partner listening on ${server.url} (interface B under ${server.url}/v1; Ctrl-C to stop)`
        createLogger((line) => this.log(line), logFormat).log('info', text, 'listening', {url: server.url})
      }
      const signal = await signalled
      partner.logger.log('info', `received ${signal}, finishing requests in flight…`, 'stopping: finishing requests in flight', {signal})
      await server.close()
    } finally {
      await partner.store.close()
    }
  }
}

/** The key a --signing-secret names; none given, none kept (writes then go unsigned). */
function signingKeyOf(text: string | undefined): Uint8Array | undefined {
  if (text === undefined) return undefined
  const key = keyOfStandardSecret(text)
  if (!key) throw new AppError('bad_request', 'signing-secret: expected whsec_ followed by base64, as register-client prints it (standard_webhooks_secret)')
  return key
}
