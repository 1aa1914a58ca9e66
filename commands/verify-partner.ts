import * as Flags from '@oclif/core/flags'
import {formatTable} from '../src/lib/table.js'
import {verifyPartner, type VerifyReport} from '../src/interfaces/partner/verify.js'
import {BaseCommand, secretFlag, stdinFlag} from './base-command.js'

export default class VerifyPartner extends BaseCommand<typeof VerifyPartner> {
  static override description = "Check a partner's interface B implementation with a full lifecycle under ids of its own; exit 1 if any check fails"
  static override examples = ['<%= config.bin %> verify-partner --url http://127.0.0.1:9090 --username acme --password s3cret']

  static override asked = ['url', 'username', 'password']
  static override flags = {
    url: Flags.string({description: 'partner base URL, without /v1'}),
    username: Flags.string({description: 'HTTP Basic username'}),
    password: secretFlag('HTTP Basic password', 'MEDPANEL_VERIFY_PASSWORD'),
    'password-stdin': stdinFlag('password', {exclusive: ['signing-secret-stdin']}),
    'signing-secret': secretFlag(
      "the client's signing secret, as given to register-client: every request is signed, and the partner must refuse pushes whose Standard Webhooks signature does not hold",
      'MEDPANEL_VERIFY_SIGNING_SECRET',
    ),
    'signing-secret-stdin': stdinFlag('signing-secret', {exclusive: ['password-stdin']}),
  }

  async run(): Promise<VerifyReport> {
    const flags = this.flags
    const url = await this.need(flags.url, 'url', 'Partner base URL (without /v1)')
    const username = await this.need(flags.username, 'username', 'Basic username')
    const password = await this.need(await this.secret(flags.password, flags['password-stdin'], 'password'), 'password', 'Basic password')
    const signingSecret = await this.secret(flags['signing-secret'], flags['signing-secret-stdin'], 'signing-secret')
    const report = await verifyPartner({url, username, password, signingSecret})
    this.say(
      formatTable(report.checks, [
        {header: 'RESULT', get: (c) => (c.ok ? 'pass' : 'FAIL')},
        {header: 'CHECK', get: (c) => c.name},
        {header: 'DETAIL', get: (c) => (c.ok ? '' : c.detail)},
      ]),
    )
    this.say(`\n${report.passed} passed, ${report.failed} failed (project ${report.project_id} at ${report.url}).`)
    if (!report.ok) {
      const failing = report.checks.filter((c) => !c.ok).map((c) => c.name)
      const named = failing.length > 5 ? `${failing.slice(0, 5).join('; ')}; and ${failing.length - 5} more` : failing.join('; ')
      process.stderr.write(`Error: ${report.failed} check${report.failed === 1 ? '' : 's'} failed: ${named}\n`)
      process.exitCode = 1
    }
    return report
  }
}
