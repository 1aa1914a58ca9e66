import {ILL_FORMED_TEXT, isWellFormedText} from '../lib/unicode.js'
import {z} from 'zod'
import {canonical} from '../lib/enums.js'
import {isEmailAddress, normalEmail} from '../lib/email.js'
import {isCountry} from '../lib/iso3166.js'
import {isValidNpi} from '../lib/npi.js'
import {calledUrlProblem, partnerUrlProblem} from '../lib/partner-address.js'

import {GRANTS, type Grant} from '../grants/names.js'
import {CLIENT_ID_TOKEN_ALGS, type ClientIdTokenAlg, DEFAULT_ID_TOKEN_ALG} from './id-token-algs.js'
import {jwksSchema, jwksUri} from './client-keys.js'

export {CLIENT_ID_TOKEN_ALGS, type ClientIdTokenAlg, GRANTS, type Grant}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

/**
 * How a client authenticates at the token endpoint, by RFC 7591's names. The two secret methods
 * both accept the secret either way (RFC 6749 §2.3.1); `none` is a public client (RFC 6749 §2.1):
 * a browser or native app that cannot keep a secret, so it holds none and must use PKCE;
 * `private_key_jwt` (RFC 7523 §2.2) signs an assertion with a key only it holds, and medpanel
 * keeps only the public half.
 */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'] as const
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number]

/**
 * A native app's private-use URI scheme (RFC 8252 §7.1): a reverse domain name the app owns, such
 * as `com.example.app:/callback`. Accepted as a redirect URI for public clients only.
 */
export function isPrivateUseRedirect(uri: string): boolean {
  return URL.canParse(uri) && /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/i.test(new URL(uri).protocol)
}

const PRIVATE_USE_FOR_PUBLIC = 'a private-use URI scheme (com.example.app:/callback) is for public clients only (token_endpoint_auth_method none)'

function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname)
}

/** A company or logo URL: http(s), absolute. */
export const httpUrl = z
  .string()
  .trim()
  .max(2048, 'must be at most 2048 characters')
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http(s) URL')

/**
 * A partner base URL: medpanel sends the partner's Basic credentials there. The checks that need
 * to know whether the operator allowed plain http run on the whole input (partnerUrlIssue).
 */
const partnerUrl = httpUrl.superRefine((v, ctx) => {
  const problem = partnerUrlProblem(v, true)
  if (problem) ctx.addIssue({code: 'custom', message: problem})
})

/** Adds the plain-http refusal to a client input whose partner_url is being set. */
function partnerUrlIssue(c: {partner_url?: string | null; allow_insecure_partner_url?: boolean}, ctx: z.RefinementCtx): void {
  if (typeof c.partner_url !== 'string') return
  const problem = partnerUrlProblem(c.partner_url, c.allow_insecure_partner_url === true)
  if (problem) ctx.addIssue({code: 'custom', path: ['partner_url'], message: problem})
}

/**
 * Whether a URI names port 0 (written `:0`, `:00`, …): the port a program asks the system for when
 * it wants any free one, so nothing ever listens there and a browser cannot be sent to it.
 */
export function namesPortZero(uri: string): boolean {
  return URL.canParse(uri) && new URL(uri).port === '0'
}

/**
 * A redirect URI is compared byte for byte at authorize time, so it must be absolute, carry no
 * fragment (RFC 6749 §3.1.2) and use https — plain http is allowed only on loopback hosts — on
 * a port a browser can reach: never 0.
 */
export const redirectUri = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine((v) => URL.canParse(v), 'must be an absolute URL')
  .refine((v) => !v.includes('#'), 'must not contain a fragment')
  .refine((v) => {
    // zod runs every check: one that is not a URL at all was named above, and must not throw here.
    if (!URL.canParse(v)) return true
    const url = new URL(v)
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url)) || isPrivateUseRedirect(v)
  }, 'must use https (http is allowed only for loopback hosts)')
  .refine((v) => !namesPortZero(v), 'must not name port 0 (no app listens there; register a loopback URI without a port to match any)')

/**
 * Where RP-initiated logout (OpenID Connect) may send the browser afterwards: compared byte for
 * byte like a redirect URI, so held to the same rules.
 */
const postLogoutRedirectUris = z.array(redirectUri).max(20, 'at most 20 post-logout redirect URIs')

/**
 * Where logout tokens are posted (OpenID Connect Back-Channel Logout §2.2): medpanel calls it from
 * the server, so it is held to the rules of every URL medpanel calls (https, or http on loopback;
 * no credentials, never a link-local address), and the spec's own: absolute, no fragment.
 */
const backchannelLogoutUri = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .superRefine((value, ctx) => {
    const problem = value.includes('#') ? 'must not contain a fragment' : calledUrlProblem(value, 'a logout token sent over plain http could be read on the way')
    if (problem) ctx.addIssue({code: 'custom', message: problem})
  })

/** The ID-token signing algorithm, in any letter case, kept in its canonical spelling. */
const idTokenAlg = z.preprocess((v) => (typeof v === 'string' ? (canonical(v, CLIENT_ID_TOKEN_ALGS) ?? v) : v), z.enum(CLIENT_ID_TOKEN_ALGS))

/** The forms an access token may take: a random string looked up by the service, or an RFC 9068 JWT. */
export const ACCESS_TOKEN_FORMATS = ['opaque', 'jwt'] as const
const accessTokenFormat = z.preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(ACCESS_TOKEN_FORMATS))

/** The longest token lifetime a client may have: ten years. */
const MAX_TOKEN_TTL = 10 * 365 * 86400

// Number.isInteger, not .int(): zod's integer check also refuses integers past 2^53, and a huge
// whole number should hear that it is too large, not that it is not whole.
const tokenTtl = z
  .number()
  .refine(Number.isInteger, 'must be a whole number of seconds')
  .refine((seconds) => seconds > 0, 'must be positive')
  .refine((seconds) => seconds <= MAX_TOKEN_TTL, `must be at most ${MAX_TOKEN_TTL} seconds (ten years)`)
  .nullable()

// Names are shown on consent pages and printed in operators' terminals: no control characters.
const name = z
  .string()
  .trim()
  .min(1, 'is required')
  .max(200, 'must be at most 200 characters')
  .refine((v) => !/[\u0000-\u001f\u007f-\u009f]/.test(v), 'must not contain control characters (escape sequences, line breaks)')
  .refine(isWellFormedText, ILL_FORMED_TEXT)

/** A client id chosen by the operator (register-client --client-id): readable, URL-safe, not too short. */
export const clientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{2,63}$/, 'must be 3 to 64 letters, digits, dots, hyphens or underscores, starting with a letter or digit')

export const newClientSchema = z
  .object({
    client_id: clientIdSchema.optional(),
    name,
    url: httpUrl,
    logo_url: httpUrl,
    redirect_uris: z.array(redirectUri).max(20, 'at most 20 redirect URIs').default([]),
    post_logout_redirect_uris: postLogoutRedirectUris.default([]),
    id_token_alg: idTokenAlg.default(DEFAULT_ID_TOKEN_ALG),
    token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).default('client_secret_basic'),
    jwks: jwksSchema.nullable().default(null),
    jwks_uri: jwksUri.nullable().default(null),
    require_pushed_authorization_requests: z.boolean().default(false),
    dpop_bound_access_tokens: z.boolean().default(false),
    backchannel_logout_uri: backchannelLogoutUri.nullable().default(null),
    backchannel_logout_session_required: z.boolean().default(false),
    access_token_format: accessTokenFormat.default('opaque'),
    grants: z
      .array(z.preprocess((v) => (typeof v === 'string' ? (canonical(v, GRANTS) ?? v) : v), z.enum(GRANTS)))
      .min(1, 'at least one grant')
      .default(['signon']),
    admin: z.boolean().default(false),
    token_ttl: tokenTtl.default(null),
    partner_url: partnerUrl.nullable().default(null),
    /** The operator accepts plain http to a host other than loopback (credentials unencrypted). */
    allow_insecure_partner_url: z.boolean().default(false),
    partner_username: z.string().min(1).max(200).nullable().default(null),
    partner_password: z.string().min(1).max(500).nullable().default(null),
    signing_secret: z.string().min(16, 'must be at least 16 characters').max(500).nullable().default(null),
  })
  .strict()
  .superRefine((c, ctx) => {
    partnerUrlIssue(c, ctx)
    if (c.grants.includes('signon') && c.redirect_uris.length === 0) {
      ctx.addIssue({code: 'custom', path: ['redirect_uris'], message: 'a signon client needs at least one redirect URI'})
    }
    publicClientIssues(c.token_endpoint_auth_method, c.grants, c.redirect_uris, ctx)
    clientKeyIssues(c.token_endpoint_auth_method, c.jwks !== null, c.jwks_uri !== null, c.grants, ctx)
    if (c.grants.includes('partner')) {
      for (const field of ['partner_url', 'partner_username', 'partner_password'] as const) {
        if (!c[field]) ctx.addIssue({code: 'custom', path: [field], message: 'is required for a partner client'})
      }
    }
  })
export type NewClientInput = z.input<typeof newClientSchema>

/**
 * What a client's authentication method rules out: a public client holds no secret, so it can use
 * only sign-on (every other interface takes the client's secret); a private-use redirect scheme is
 * a native app's, so only a public client may register one.
 */
export function publicClientIssues(method: string, grants: readonly string[], redirectUris: readonly string[], ctx: z.RefinementCtx): void {
  if (method === 'none' && grants.some((grant) => grant !== 'signon')) {
    ctx.addIssue({code: 'custom', path: ['grants'], message: 'a public client (token_endpoint_auth_method none) holds no secret, so it can have only the signon grant'})
  }
  if (method !== 'none' && redirectUris.some(isPrivateUseRedirect)) ctx.addIssue({code: 'custom', path: ['redirect_uris'], message: PRIVATE_USE_FOR_PUBLIC})
}

/**
 * A private_key_jwt client names its keys one way, a JWK Set or a jwks_uri; no other client has
 * keys. It holds no secret, so it can hold only the grants whose interfaces it reaches through the
 * token endpoint: sign-on, and pulses (client_credentials); balances, searches and partner pushes
 * take the client's secret itself.
 */
export function clientKeyIssues(method: string, hasJwks: boolean, hasJwksUri: boolean, grants: readonly string[], ctx: z.RefinementCtx): void {
  if (method === 'private_key_jwt') {
    if (hasJwks === hasJwksUri)
      ctx.addIssue({code: 'custom', path: ['jwks'], message: 'a private_key_jwt client needs its public keys: a JWK Set (jwks) or a jwks_uri, one of the two'})
    const secretOnly = grants.filter((grant) => grant !== 'signon' && grant !== 'pulses')
    if (secretOnly.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['grants'],
        message: `a private_key_jwt client holds no secret, so it can have only the signon and pulses grants (not ${secretOnly.join(', ')})`,
      })
    }
  } else if (hasJwks || hasJwksUri) {
    ctx.addIssue({code: 'custom', path: ['jwks'], message: 'public keys (jwks, jwks_uri) are for private_key_jwt clients only'})
  }
}

export const clientPatchSchema = z
  .object({
    name: name.optional(),
    url: httpUrl.optional(),
    logo_url: httpUrl.optional(),
    redirect_uris: z.array(redirectUri).min(1, 'at least one redirect URI').max(20).optional(),
    /** Replaces the list; an empty one removes every post-logout redirect URI. */
    post_logout_redirect_uris: postLogoutRedirectUris.optional(),
    id_token_alg: idTokenAlg.optional(),
    /** private_key_jwt: replaces the client's keys (a set, or where it publishes one). */
    jwks: jwksSchema.optional(),
    jwks_uri: jwksUri.optional(),
    require_pushed_authorization_requests: z.boolean().optional(),
    dpop_bound_access_tokens: z.boolean().optional(),
    /** Null removes it: the client hears of no more logouts. */
    backchannel_logout_uri: backchannelLogoutUri.nullable().optional(),
    backchannel_logout_session_required: z.boolean().optional(),
    access_token_format: accessTokenFormat.optional(),
    grants: z
      .array(z.preprocess((v) => (typeof v === 'string' ? (canonical(v, GRANTS) ?? v) : v), z.enum(GRANTS)))
      .min(1, 'at least one grant')
      .optional(),
    admin: z.boolean().optional(),
    token_ttl: tokenTtl.optional(),
    expire: z.boolean().optional(),
    partner_url: partnerUrl.nullable().optional(),
    /** As in newClientSchema; checked only when this patch sets partner_url, so not stored. */
    allow_insecure_partner_url: z.boolean().optional(),
    partner_username: z.string().min(1).max(200).nullable().optional(),
    partner_password: z.string().min(1).max(500).nullable().optional(),
    signing_secret: z.string().min(16, 'must be at least 16 characters').max(500).nullable().optional(),
  })
  .strict()
  // The URL is checked only when it changes: an update of another field never re-refuses a URL
  // the operator allowed earlier.
  .superRefine(partnerUrlIssue)
export type ClientPatch = z.input<typeof clientPatchSchema>

/** The authentication method's rules checked again on an update, against the client's stored method. */
export const publicClientRules = z
  .object({method: z.string(), grants: z.array(z.string()), redirect_uris: z.array(z.string()), has_jwks: z.boolean(), has_jwks_uri: z.boolean()})
  .superRefine((c, ctx) => {
    publicClientIssues(c.method, c.grants, c.redirect_uris, ctx)
    clientKeyIssues(c.method, c.has_jwks, c.has_jwks_uri, c.grants, ctx)
  })

export const newMemberSchema = z
  .object({
    email: z.string().max(1024).refine(isWellFormedText, ILL_FORMED_TEXT).transform(normalEmail).pipe(z.string().max(254).refine(isEmailAddress, 'must be an e-mail address')),
    password: z.string().min(8, 'must be at least 8 characters').max(1024),
    first_name: name,
    last_name: name,
    country: z
      .string()
      .trim()
      .toUpperCase()
      .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
      .refine(isCountry, 'is not a country of the ISO 3166-1 list (US, CA, GB, …; see GET /balance/countries)'),
    specialty: name,
    npi: z.string().trim().refine(isValidNpi, 'must be a valid 10-digit NPI').nullable().default(null),
    me: z
      .string()
      .trim()
      .regex(/^\d{10,11}$/, 'must be an AMA ME number (10 or 11 digits)')
      .nullable()
      .default(null),
  })
  .strict()
export type NewMemberInput = z.input<typeof newMemberSchema>

export const memberPatchSchema = z
  .object({
    password: z.string().min(8, 'must be at least 8 characters').max(1024).optional(),
    active: z.boolean().optional(),
  })
  .strict()
export type MemberPatch = z.input<typeof memberPatchSchema>
