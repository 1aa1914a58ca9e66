import * as Flags from '@oclif/core/flags'
import {isInsecurePartnerUrl} from '../src/lib/partner-address.js'
import type {z} from 'zod'
import {
  ACCESS_TOKEN_FORMATS,
  CLIENT_ID_TOKEN_ALGS,
  GRANTS,
  type Grant,
  httpUrl,
  type NewClientInput,
  redirectUri,
  TOKEN_ENDPOINT_AUTH_METHODS,
  type TokenEndpointAuthMethod,
} from '../src/registry/schema.js'
import {readJwksFile} from '../src/registry/client-keys.js'
import {registerClient, type RegisteredClient} from '../src/registry/service.js'
import {type AuditNote, SECRET_CHANGED} from '../src/operator/audit.js'
import {BaseCommand, choiceFlag, choicesFlag, insecurePartnerUrlWarning, secretFlag, stdinFlag} from './base-command.js'
import {clientRecord, withStandardSecret} from './output/registry.js'

export default class RegisterClient extends BaseCommand<typeof RegisterClient> {
  static override description = 'Register a partner company as a client; prints its client_id and client_secret (shown only once; a public client has none)'
  static override examples = [
    '<%= config.bin %> register-client --name "Acme Research" --url https://acme.example --logo-url https://acme.example/logo.png --redirect-uri https://acme.example/callback',
    '<%= config.bin %> register-client --name Pulses --url https://p.example --logo-url https://p.example/l.png --grant pulses --admin --json',
    '<%= config.bin %> register-client --name "Acme Portal" --url https://portal.acme.example --logo-url https://portal.acme.example/logo.png --redirect-uri https://portal.acme.example/callback --post-logout-redirect-uri https://portal.acme.example/signed-out --id-token-alg ES256',
    '<%= config.bin %> register-client --name "Acme SPA" --url https://app.acme.example --logo-url https://app.acme.example/logo.png --redirect-uri https://app.acme.example/callback --token-endpoint-auth-method none',
    '<%= config.bin %> register-client --name "Acme Health" --url https://health.acme.example --logo-url https://health.acme.example/logo.png --redirect-uri https://health.acme.example/callback --token-endpoint-auth-method private_key_jwt --jwks-uri https://health.acme.example/jwks.json',
    '<%= config.bin %> register-client --client-id acme-research --name "Acme Research" --url https://acme.example --logo-url https://acme.example/logo.png --grant pulses,conversations',
    'printf \'%s\\n\' "$SIGNING_SECRET" | MEDPANEL_PARTNER_PASSWORD="$PARTNER_PASSWORD" <%= config.bin %> register-client --name "Acme Research" … --grant partner --partner-url https://api.acme.example --partner-username medpanel --signing-secret-stdin',
  ]

  static override asked = ['name', 'url', 'logo-url']
  static override flags = {
    'client-id': Flags.string({
      description: 'the client_id to register it under, instead of a random one (3-64 letters, digits, . _ -): scripts that seed data get the same ids every run',
    }),
    name: Flags.string({description: 'company name shown on the consent page'}),
    url: Flags.string({description: 'company URL'}),
    'logo-url': Flags.string({description: 'company logo URL'}),
    'redirect-uri': Flags.string({description: 'allowed redirect URI, matched exactly (repeat or comma-separate)', multiple: true, delimiter: ','}),
    'post-logout-redirect-uri': Flags.string({
      description:
        "where a logout the client starts (OpenID Connect) may send the browser afterwards, besides its redirect URIs and their sites' roots, which need no flag; matched exactly, same rules as --redirect-uri (repeat or comma-separate)",
      multiple: true,
      delimiter: ',',
    }),
    'id-token-alg': choiceFlag(CLIENT_ID_TOKEN_ALGS, {description: "algorithm the client's ID tokens are signed with (OpenID Connect)", default: 'RS256'}),
    'access-token-format': choiceFlag(ACCESS_TOKEN_FORMATS, {
      description:
        "opaque (a random string the service looks up) or jwt (RFC 9068: signed with the ID-token keys, checked by a resource server against jwks_uri; lives at most 10 minutes, and revocation reaches only the service's own checks)",
      default: 'opaque',
    }),
    'token-endpoint-auth-method': choiceFlag(TOKEN_ENDPOINT_AUTH_METHODS, {
      description:
        "how the client proves itself at the token endpoint: client_secret_basic (the secret in the Basic header or the form), client_secret_post, none for a public client (a browser or native app: no secret is made, PKCE is required), or private_key_jwt (a JWT signed with the client's own key; give --jwks-file or --jwks-uri; no secret is made)",
      default: 'client_secret_basic',
    }),
    'jwks-file': Flags.string({
      description: 'private_key_jwt: a file holding the client\'s public keys as a JWK Set ({"keys": [...]}; public halves only)',
      exclusive: ['jwks-uri'],
    }),
    'jwks-uri': Flags.string({description: 'private_key_jwt: where the client publishes its JWK Set (https, or http on loopback); fetched when needed, cached ten minutes'}),
    'require-pushed-authorization-requests': Flags.boolean({
      description: 'the client gets codes only for authorization requests it pushed first to /oauth/par (RFC 9126), never for one sent through the browser alone',
      default: false,
    }),
    'require-dpop': Flags.boolean({
      description: 'every token the client gets is bound to a DPoP key it proves at each use (RFC 9449); it gets no bearer token',
      default: false,
    }),
    'backchannel-logout-uri': Flags.string({
      description:
        "OpenID Connect Back-Channel Logout: where a logout token is posted when a member's sign-in session, in which the client got an ID token, ends (https, or http on loopback; no fragment)",
    }),
    'backchannel-logout-session-required': Flags.boolean({
      description: 'the client needs sid in its logout tokens (medpanel always sends it)',
      dependsOn: ['backchannel-logout-uri'],
    }),
    'token-ttl': Flags.integer({description: 'access-token lifetime in seconds (default: tokens do not expire)', min: 1}),
    grant: choicesFlag(GRANTS, {description: 'grants (repeat or comma-separate) [default: signon]; a signon client also needs --redirect-uri'}),
    admin: Flags.boolean({description: 'admin client: sees every pulse', default: false}),
    'partner-url': Flags.string({
      description: 'partner base URL, without /v1 (partner grant): https, or http on loopback; never link-local (169.254.x.x, fe80::) or with user:password@ in it',
    }),
    'allow-insecure-partner-url': Flags.boolean({
      description: 'accept a plain http --partner-url to a host other than loopback: the Basic credentials then cross the network unencrypted',
      dependsOn: ['partner-url'],
    }),
    'partner-username': Flags.string({description: 'HTTP Basic username medpanel sends to the partner'}),
    'partner-password': secretFlag('HTTP Basic password medpanel sends to the partner', 'MEDPANEL_PARTNER_PASSWORD'),
    'partner-password-stdin': stdinFlag('partner-password', {exclusive: ['signing-secret-stdin']}),
    'signing-secret': secretFlag(
      'secret that signs pushes to this partner (X-Medpanel-Signature and the Standard Webhooks headers; the output shows it as standard_webhooks_secret)',
      'MEDPANEL_SIGNING_SECRET',
    ),
    'signing-secret-stdin': stdinFlag('signing-secret', {exclusive: ['partner-password-stdin']}),
  }

  /** A sign-on client (the default grant) cannot do without a redirect URI: asked with the rest. */
  protected override askedNow(): string[] {
    const grants = (this.flags.grant ?? ['signon']) as Grant[]
    return grants.includes('signon') ? [...RegisterClient.asked, 'redirect-uri'] : RegisterClient.asked
  }

  async run(): Promise<RegisteredClient & {standard_webhooks_secret?: string}> {
    const flags = this.flags
    const grants = (flags.grant ?? ['signon']) as Grant[]
    // At a terminal each answer is checked as it is typed, by the rules the store applies.
    const name = await this.need(flags.name, 'name', 'Company name')
    const url = await this.need(flags.url, 'url', 'Company URL', checkWith(httpUrl))
    const logoUrl = await this.need(flags['logo-url'], 'logo-url', 'Logo URL', checkWith(httpUrl))
    let redirectUris = flags['redirect-uri'] ?? []
    if (grants.includes('signon') && redirectUris.length === 0 && this.canPrompt()) {
      const {input} = await import('@inquirer/prompts')
      const list = (text: string) =>
        text
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      const one = checkWith(redirectUri)
      redirectUris = list(
        await input({
          message: 'Redirect URI(s), comma-separated',
          required: true,
          validate: (text) => {
            for (const uri of list(text)) {
              const verdict = one(uri)
              if (verdict !== true) return `${uri}: ${verdict}`
            }
            return list(text).length > 0 ? true : 'at least one redirect URI'
          },
        }),
      )
    }
    const signingSecret = (await this.secret(flags['signing-secret'], flags['signing-secret-stdin'], 'signing-secret')) ?? null
    const input: NewClientInput = {
      ...(flags['client-id'] === undefined ? {} : {client_id: flags['client-id']}),
      name,
      url,
      logo_url: logoUrl,
      redirect_uris: redirectUris,
      post_logout_redirect_uris: flags['post-logout-redirect-uri'] ?? [],
      id_token_alg: flags['id-token-alg'],
      token_endpoint_auth_method: flags['token-endpoint-auth-method'] as TokenEndpointAuthMethod,
      jwks: flags['jwks-file'] === undefined ? null : (readJwksFile(flags['jwks-file']) as NewClientInput['jwks']),
      jwks_uri: flags['jwks-uri'] ?? null,
      require_pushed_authorization_requests: flags['require-pushed-authorization-requests'],
      dpop_bound_access_tokens: flags['require-dpop'],
      backchannel_logout_uri: flags['backchannel-logout-uri'] ?? null,
      backchannel_logout_session_required: flags['backchannel-logout-session-required'],
      access_token_format: flags['access-token-format'],
      grants,
      admin: flags.admin,
      token_ttl: flags['token-ttl'] ?? null,
      partner_url: flags['partner-url'] ?? null,
      allow_insecure_partner_url: flags['allow-insecure-partner-url'],
      partner_username: flags['partner-username'] ?? null,
      partner_password: (await this.secret(flags['partner-password'], flags['partner-password-stdin'], 'partner-password')) ?? null,
      signing_secret: signingSecret,
    }
    const client = await this.audited(
      (store) => registerClient(store, input, this.clock.now()),
      (registered) => registrationNote(registered, input),
    )
    if (client.partner_url && isInsecurePartnerUrl(client.partner_url)) insecurePartnerUrlWarning(client.partner_url)
    const shown = withStandardSecret(client, signingSecret)
    // A public client has no secret to keep.
    this.say(shown.client_secret === undefined ? clientRecord(shown) : `${clientRecord(shown)}\n\nStore the client_secret now: it is not shown again.`)
    return shown
  }
}

/** The audit trail's record of a registration: what the client now is, its secrets only as changed. */
function registrationNote(client: RegisteredClient, input: NewClientInput): AuditNote {
  const {client_id, client_secret, created_at: _created, updated_at: _updated, expired: _expired, expired_at: _expiredAt, ...fields} = client
  return {
    kind: 'client',
    target: client_id,
    changes: {
      ...fields,
      client_secret: client_secret === undefined ? undefined : SECRET_CHANGED,
      partner_password: input.partner_password ? SECRET_CHANGED : undefined,
      signing_secret: input.signing_secret ? SECRET_CHANGED : undefined,
    },
  }
}

/** A prompt's check from a schema: true, or the schema's first message. */
function checkWith(schema: z.ZodType<unknown>): (value: string) => true | string {
  return (value) => {
    const result = schema.safeParse(value)
    return result.success ? true : (result.error.issues[0]?.message ?? 'not valid')
  }
}
