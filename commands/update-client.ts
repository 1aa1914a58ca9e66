import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {isInsecurePartnerUrl} from '../src/lib/partner-address.js'
import {ACCESS_TOKEN_FORMATS, CLIENT_ID_TOKEN_ALGS, GRANTS, type ClientPatch, type Grant} from '../src/registry/schema.js'
import {updateClient, type ClientView} from '../src/registry/service.js'
import {readJwksFile} from '../src/registry/client-keys.js'
import {keyIds} from '../src/registry/views.js'
import {type AuditNote, SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand, changedSecretFlag, choiceFlag, choicesFlag, fromEnvFlag, insecurePartnerUrlWarning, stdinFlag} from './base-command.js'
import {clientRecord, withStandardSecret} from './output/registry.js'

export default class UpdateClient extends BaseCommand<typeof UpdateClient> {
  static override description =
    'Change a client. --expire and --token-ttl end every token the client holds. A secret (partner password, signing secret) changes only when its flag, its -stdin flag or its -from-env flag is given: an exported variable alone changes nothing.'
  static override examples = [
    '<%= config.bin %> update-client 3f2a… --expire',
    '<%= config.bin %> update-client demo-client --token-ttl 3600',
    '<%= config.bin %> update-client 3f2a… --no-token-ttl',
    '<%= config.bin %> update-client demo-client --post-logout-redirect-uri http://127.0.0.1:8080/demo/signed-out --id-token-alg ES256',
    '<%= config.bin %> update-client demo-client --no-post-logout-redirect-uri',
    "printf %s 'new partner pass' | <%= config.bin %> update-client 3f2a… --partner-password-stdin",
    "MEDPANEL_SIGNING_SECRET='a-new-signing-secret-0123' <%= config.bin %> update-client 3f2a… --signing-secret-from-env",
    '<%= config.bin %> update-client 3f2a… --partner-url http://10.0.0.7:8080 --allow-insecure-partner-url',
  ]
  static override args = {id: Args.string({description: 'client_id', required: true})}

  static override flags = {
    name: Flags.string({description: 'company name'}),
    url: Flags.string({description: 'company URL'}),
    'logo-url': Flags.string({description: 'company logo URL'}),
    'redirect-uri': Flags.string({description: 'replace the redirect URIs (repeat or comma-separate)', multiple: true, delimiter: ','}),
    'post-logout-redirect-uri': Flags.string({
      description:
        "replace the post-logout redirect URIs (OpenID Connect logout; the redirect URIs and their sites' roots are accepted without them), matched exactly, same rules as --redirect-uri (repeat or comma-separate)",
      multiple: true,
      delimiter: ',',
      exclusive: ['no-post-logout-redirect-uri'],
    }),
    'no-post-logout-redirect-uri': Flags.boolean({
      description: "remove every post-logout redirect URI: logouts this client starts go back only to its redirect URIs and their sites' roots",
    }),
    'id-token-alg': choiceFlag(CLIENT_ID_TOKEN_ALGS, {description: "sign the client's ID tokens with this algorithm from now on"}),
    grant: choicesFlag(GRANTS, {description: 'replace the grants'}),
    'access-token-format': choiceFlag(ACCESS_TOKEN_FORMATS, {description: 'opaque or jwt (RFC 9068) access tokens from now on; tokens already issued keep their form'}),
    'jwks-file': Flags.string({
      description: "private_key_jwt: replace the client's keys with the JWK Set in this file (rotation: list the new key beside the old until the client signs with it)",
      exclusive: ['jwks-uri'],
    }),
    'jwks-uri': Flags.string({description: "private_key_jwt: take the client's keys from this URL from now on, instead of a registered set"}),
    admin: Flags.boolean({description: 'admin client (sees every pulse)', allowNo: true}),
    'require-pushed-authorization-requests': Flags.boolean({
      description: 'codes only for authorization requests the client pushed first (RFC 9126); --no-require-pushed-authorization-requests lifts it',
      allowNo: true,
    }),
    'require-dpop': Flags.boolean({
      description: 'only DPoP-bound tokens for the client from now on (RFC 9449); --no-require-dpop lets it have bearer tokens again',
      allowNo: true,
    }),
    'backchannel-logout-uri': Flags.string({
      description: 'OpenID Connect Back-Channel Logout: post logout tokens here from now on (https, or http on loopback; no fragment)',
      exclusive: ['no-backchannel-logout-uri'],
    }),
    'no-backchannel-logout-uri': Flags.boolean({description: 'remove the back-channel logout URI: the client hears of no more logouts (queued ones are dropped)'}),
    'backchannel-logout-session-required': Flags.boolean({
      description: 'the client needs sid in its logout tokens (always sent); --no-backchannel-logout-session-required clears it',
      allowNo: true,
    }),
    'token-ttl': Flags.integer({description: 'new access-token lifetime in seconds; revokes current tokens', min: 1, exclusive: ['no-token-ttl']}),
    'no-token-ttl': Flags.boolean({description: 'tokens no longer expire; revokes current tokens'}),
    expire: Flags.boolean({description: 'expire the client account: its tokens stop working at once', exclusive: ['unexpire']}),
    unexpire: Flags.boolean({description: 'reinstate an expired client (old tokens stay dead)'}),
    'partner-url': Flags.string({
      description: 'partner base URL, without /v1: https, or http on loopback; never link-local (169.254.x.x, fe80::) or with user:password@ in it',
    }),
    'allow-insecure-partner-url': Flags.boolean({
      description: 'accept a plain http --partner-url to a host other than loopback: the Basic credentials then cross the network unencrypted',
      dependsOn: ['partner-url'],
    }),
    'partner-username': Flags.string({description: 'HTTP Basic username for pushes'}),
    'partner-password': changedSecretFlag('HTTP Basic password for pushes', 'partner-password', 'MEDPANEL_PARTNER_PASSWORD'),
    'partner-password-stdin': stdinFlag('partner-password', {exclusive: ['signing-secret-stdin']}),
    'partner-password-from-env': fromEnvFlag('partner-password', 'MEDPANEL_PARTNER_PASSWORD'),
    'signing-secret': changedSecretFlag(
      'replace the secret that signs pushes (X-Medpanel-Signature and the Standard Webhooks headers; the output shows it as standard_webhooks_secret)',
      'signing-secret',
      'MEDPANEL_SIGNING_SECRET',
    ),
    'signing-secret-stdin': stdinFlag('signing-secret', {exclusive: ['partner-password-stdin']}),
    'signing-secret-from-env': fromEnvFlag('signing-secret', 'MEDPANEL_SIGNING_SECRET'),
  }

  async run(): Promise<ClientView & {revoked_tokens: number; standard_webhooks_secret?: string}> {
    const f = this.flags
    const patch: ClientPatch = {
      name: f.name,
      url: f.url,
      logo_url: f['logo-url'],
      redirect_uris: f['redirect-uri'],
      post_logout_redirect_uris: f['no-post-logout-redirect-uri'] ? [] : f['post-logout-redirect-uri'],
      id_token_alg: f['id-token-alg'],
      jwks: f['jwks-file'] === undefined ? undefined : (readJwksFile(f['jwks-file']) as ClientPatch['jwks']),
      jwks_uri: f['jwks-uri'],
      grants: f.grant as Grant[] | undefined,
      admin: f.admin,
      require_pushed_authorization_requests: f['require-pushed-authorization-requests'],
      dpop_bound_access_tokens: f['require-dpop'],
      backchannel_logout_uri: f['no-backchannel-logout-uri'] ? null : f['backchannel-logout-uri'],
      backchannel_logout_session_required: f['backchannel-logout-session-required'],
      access_token_format: f['access-token-format'],
      token_ttl: f['no-token-ttl'] ? null : f['token-ttl'],
      expire: f.expire ? true : f.unexpire ? false : undefined,
      partner_url: f['partner-url'],
      allow_insecure_partner_url: f['allow-insecure-partner-url'] || undefined,
      partner_username: f['partner-username'],
      partner_password: await this.secret(f['partner-password'], f['partner-password-stdin'], 'partner-password', {
        env: 'MEDPANEL_PARTNER_PASSWORD',
        given: f['partner-password-from-env'],
      }),
      signing_secret: await this.secret(f['signing-secret'], f['signing-secret-stdin'], 'signing-secret', {
        env: 'MEDPANEL_SIGNING_SECRET',
        given: f['signing-secret-from-env'],
      }),
    }
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as ClientPatch
    if (Object.keys(defined).length === 0) this.error('nothing to change: give at least one flag (see --help)')
    const client = await this.audited(
      (store) => updateClient(store, this.args.id, defined, this.clock.now()),
      (updated) => updateNote(updated, defined),
    )
    if (f['partner-url'] !== undefined && isInsecurePartnerUrl(f['partner-url'])) insecurePartnerUrlWarning(client.partner_url ?? f['partner-url'])
    const shown = withStandardSecret(client, patch.signing_secret)
    this.say(clientRecord(shown))
    return shown
  }
}

/**
 * The audit trail's record of an update: the fields given, a new JWK Set by its key ids, and a
 * partner password or signing secret only as changed (or null, removed).
 */
function updateNote(client: ClientView & {revoked_tokens: number}, patch: ClientPatch): AuditNote {
  const {jwks, partner_password, signing_secret, ...fields} = patch
  const secret = (value: string | null | undefined) => (value === undefined || value === null ? value : SECRET_CHANGED)
  return {
    kind: 'client',
    target: client.client_id,
    changes: {
      ...fields,
      ...(jwks === undefined ? {} : {jwks_key_ids: jwks === null ? null : keyIds(JSON.stringify(jwks))}),
      partner_password: secret(partner_password),
      signing_secret: secret(signing_secret),
      revoked_tokens: client.revoked_tokens,
    },
  }
}
