import * as Flags from '@oclif/core/flags'
import {issueToken} from '../src/interfaces/signon/issue-token.js'
import type {TokenResponse} from '../src/interfaces/signon/tokens.js'
import {parseMemberId} from '../src/registry/service.js'
import {SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand} from './base-command.js'

export default class IssueToken extends BaseCommand<typeof IssueToken> {
  static override description = 'Mint a member access token for a client without the browser flow (for test scripts)'
  static override examples = [
    'TOKEN=$(<%= config.bin %> issue-token --member 1 --client demo-client --json | jq -r .access_token)',
    '<%= config.bin %> issue-token --member 1 --client demo-client --scope "openid profile email"',
  ]
  static override flags = {
    member: Flags.string({description: 'user_id', required: true}),
    client: Flags.string({description: 'client_id', required: true}),
    scope: Flags.string({description: 'space-separated scopes: profile (the default), openid, email; openid lets the token read /oauth/userinfo', default: 'profile'}),
  }

  async run(): Promise<TokenResponse> {
    const scopes = this.flags.scope.split(' ').filter(Boolean)
    const memberId = parseMemberId(this.flags.member)
    const token = await this.audited(
      (store) => issueToken(store.db, memberId, this.flags.client, this.clock.now(), scopes),
      (issued) => ({
        kind: 'member',
        target: memberId,
        changes: {access_token: SECRET_CHANGED, client_id: this.flags.client, scope: issued.scope, expires_in: issued.expires_in ?? null},
      }),
    )
    this.say(`access_token  ${token.access_token}\ntoken_type    ${token.token_type}\nexpires_in    ${token.expires_in ?? 'never'}\nscope         ${token.scope}`)
    return token
  }
}
