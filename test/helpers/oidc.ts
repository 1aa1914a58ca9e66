import * as client from 'openid-client'
import {createHash} from 'node:crypto'
import {join} from 'node:path'
import {cliCommand, cliJson, startCli, tempDir, type Launcher, type RunningCli} from './cli.js'
import type {CookieBrowser} from './oidc-browser.js'

/**
 * A real `serve` acting as OpenID Provider for the OIDC end-to-end tests, with one member and the
 * relying parties each test asks for, all registered through the CLI.
 */

export type IdTokenAlg = 'RS256' | 'ES256'

export interface RelyingParty {
  client_id: string
  client_secret: string
  /** The algorithm the client was registered with (RS256 when registered without one). */
  alg: IdTokenAlg
  redirectUri: string
  postLogoutRedirectUri: string
}

export const MEMBER = {
  email: 'oidc.member@clinic.example',
  password: 'oidc-member-password-1',
  first_name: 'Ngozi',
  last_name: 'Adeyemi',
  country: 'NG',
  specialty: 'Dermatology',
}

export interface Provider {
  server: RunningCli
  /** The store file (`--db`). */
  db: string
  launcher: Launcher
  /** The member's id, as the CLI printed it. */
  memberId: number
  /** The ID token's and UserInfo's `sub`: the member id as a string. */
  sub: string
  /**
   * Registers a relying party named `name` (ID tokens in `alg`, RS256 when not given) whose
   * redirect and post-logout URIs are under `origin` (default: the service's own).
   */
  register: (name: string, alg?: IdTokenAlg, origin?: string) => RelyingParty
}

/**
 * register-client's arguments for a relying party called `name` with defaults (no --token-ttl,
 * client_secret_basic unless `extra` says otherwise), as an integrator registers one: its URL and
 * logo under `https://<name as a slug>.example`, and `redirectUri`.
 */
export function clientRegistration(db: string, name: string, redirectUri: string, extra: string[] = []): string[] {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-')
  return [
    'register-client',
    '--db',
    db,
    '--name',
    name,
    '--url',
    `https://${slug}.example`,
    '--logo-url',
    `https://${slug}.example/logo.png`,
    '--redirect-uri',
    redirectUri,
    ...extra,
  ]
}

/** Starts `serve` on a loopback port with a new store, adds MEMBER. */
export async function startProvider(options: {launcher?: Launcher; db?: string} = {}): Promise<Provider> {
  const launcher = options.launcher ?? cliCommand()
  const db = options.db ?? join(tempDir('medpanel-oidc-'), 'oidc.db')
  const server = await startCli(['serve', '--port', '0', '--host', '127.0.0.1', '--no-worker', '--db', db], {}, launcher)
  const member = cliJson<{user_id: number}>(
    [
      'add-member',
      '--db',
      db,
      '--email',
      MEMBER.email,
      '--password',
      MEMBER.password,
      '--first-name',
      MEMBER.first_name,
      '--last-name',
      MEMBER.last_name,
      '--country',
      MEMBER.country,
      '--specialty',
      MEMBER.specialty,
    ],
    {},
    launcher,
  )
  const register = (name: string, alg?: IdTokenAlg, origin = server.url): RelyingParty => {
    const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-')
    const redirectUri = `${origin}/rp/${slug}/callback`
    const postLogoutRedirectUri = `${origin}/rp/${slug}/signed-out`
    // No --token-ttl: registered with defaults, as an integrator would; OpenID requests then
    // answer without expires_in, which every library accepts.
    const registered = cliJson<{client_id: string; client_secret: string; id_token_alg: string; post_logout_redirect_uris: string[]}>(
      clientRegistration(db, name, redirectUri, ['--post-logout-redirect-uri', postLogoutRedirectUri, ...(alg === undefined ? [] : ['--id-token-alg', alg])]),
      {},
      launcher,
    )
    if (registered.id_token_alg !== (alg ?? 'RS256') || registered.post_logout_redirect_uris.join() !== postLogoutRedirectUri) {
      throw new Error(`register-client did not keep the OpenID settings: ${JSON.stringify(registered)}`)
    }
    return {client_id: registered.client_id, client_secret: registered.client_secret, alg: alg ?? 'RS256', redirectUri, postLogoutRedirectUri}
  }
  return {server, db, launcher, memberId: member.user_id, sub: String(member.user_id), register}
}

/** The ID token's header, read without checking anything. */
export function jwtHeader(jwt: string): {alg: string; kid: string; typ?: string} {
  return JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8'))
}

/** The at_hash an access token must have (OpenID Connect Core §3.1.3.6: SHA-256 for RS256 and ES256, left half, base64url). */
export function expectedAtHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url')
}

/** The claims `openid profile email` gives the member (the ID token's and UserInfo's). */
export function memberClaims(sub: string) {
  return {
    sub,
    name: `${MEMBER.first_name} ${MEMBER.last_name}`,
    given_name: MEMBER.first_name,
    family_name: MEMBER.last_name,
    country_of_practice: MEMBER.country,
    primary_specialty: MEMBER.specialty,
    email: MEMBER.email,
    email_verified: false,
  }
}

/** openid-client's configuration for a relying party, by default discovery (/.well-known/openid-configuration) on the issuer URL. */
export function discover(provider: Provider, rp: RelyingParty, metadata: Partial<client.ClientMetadata> = {}): Promise<client.Configuration> {
  return client.discovery(new URL(provider.server.url), rp.client_id, {client_secret: rp.client_secret, ...metadata}, undefined, {execute: [client.allowInsecureRequests]})
}

/**
 * The code flow as openid-client's README has it: PKCE, nonce and state, `openid profile email`;
 * the browser signs in (if it must) and presses Allow; the library exchanges the code and checks
 * the ID token. `extra` adds authorization request parameters.
 */
export async function signOn(config: client.Configuration, rp: RelyingParty, browser: CookieBrowser, extra: Record<string, string> = {}) {
  const verifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: rp.redirectUri,
    scope: 'openid profile email',
    nonce,
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  })
  const callback = await browser.authorize(url, MEMBER)
  if (callback.origin + callback.pathname !== rp.redirectUri) throw new Error(`redirected to ${callback} instead of ${rp.redirectUri}`)
  const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state})
  return {tokens, nonce, idToken: tokens.id_token!}
}
