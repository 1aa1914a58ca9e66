import * as client from 'openid-client'
import {createRemoteJWKSet, jwtVerify} from 'jose'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, type Launcher} from '../helpers/cli.js'
import {freshExecutable} from '../helpers/executable.js'
import {CookieBrowser, isSignInPage} from '../helpers/oidc-browser.js'
import {discover, expectedAtHash, MEMBER, memberClaims, signOn, startProvider, type Provider} from '../helpers/oidc.js'

/**
 * The OpenID Provider in the single executable (Node 22's SEA, node:sqlite, keys made and sealed by
 * the bundled jose): openid-client's default discovery, the code flow, the ID token checked by
 * the library and by its signature against jwks_uri, UserInfo, logout. Every command, `serve`
 * included, runs from dist/medpanel (built now if the checkout has none newer than dist/).
 */
describe('OpenID Connect from the single executable', () => {
  let launcher: Launcher
  let provider: Provider
  let executable: ReturnType<typeof freshExecutable> | undefined

  beforeAll(async () => {
    executable = freshExecutable()
    // The executable has node:sqlite only: the Node run's MEDPANEL_SQLITE_DRIVER=better-sqlite3 is not for it.
    const {MEDPANEL_SQLITE_DRIVER: _driver, ...env} = process.env
    launcher = {command: executable.path, args: [], env: env as Record<string, string>}
    provider = await startProvider({launcher})
  })
  afterAll(async () => {
    await provider?.server.stop()
    executable?.dispose()
  })

  it('is the executable that answers', () => {
    const version = cli(['--version'], {}, launcher)
    expect(version.stdout).toMatch(/^medpanel\/\d+\.\d+\.\d+ linux-x64 node-v22\./)
  })

  for (const alg of ['RS256', 'ES256'] as const) {
    it(`${alg}: default discovery, code flow with PKCE and nonce, the ID token validated, UserInfo, logout`, async () => {
      const rp = provider.register(`Executable ${alg} RP`, alg)
      const config = await discover(provider, rp, {id_token_signed_response_alg: alg})
      expect(config.serverMetadata()).toMatchObject({
        issuer: provider.server.url,
        jwks_uri: `${provider.server.url}/oauth/jwks`,
        end_session_endpoint: `${provider.server.url}/oauth/end_session`,
      })

      const browser = new CookieBrowser(provider.server.url)
      const {tokens, nonce, idToken} = await signOn(config, rp, browser)
      const claims = tokens.claims()!
      expect(claims).toMatchObject({...memberClaims(provider.sub), iss: provider.server.url, aud: rp.client_id, nonce, at_hash: expectedAtHash(tokens.access_token)})
      const verified = await jwtVerify(idToken, createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!)), {
        issuer: provider.server.url,
        audience: rp.client_id,
        algorithms: [alg],
      })
      expect(verified.payload).toEqual(claims)
      expect(await client.fetchUserInfo(config, tokens.access_token, claims.sub)).toEqual(memberClaims(provider.sub))

      const loggedOut = await browser.request(client.buildEndSessionUrl(config, {id_token_hint: idToken, post_logout_redirect_uri: rp.postLogoutRedirectUri, state: 'exe'}))
      expect(loggedOut.status).toBe(303)
      expect(loggedOut.headers.get('location')).toBe(`${rp.postLogoutRedirectUri}?state=exe`)
      const again = client.buildAuthorizationUrl(config, {
        redirect_uri: rp.redirectUri,
        scope: 'openid',
        nonce: client.randomNonce(),
        code_challenge: 'E9Melhoa2OwvFrEMTJguCQaoeEKmfhB4jv_1ZdOrPV8',
        code_challenge_method: 'S256',
      })
      expect(isSignInPage((await browser.open(again)).html)).toBe(true)
    })
  }

  it('a native app: a public client registered with defaults, PKCE on a loopback port of its own, refresh with rotation', async () => {
    const registered = cliJson<{client_id: string; client_secret?: string}>(
      [
        'register-client',
        '--db',
        provider.db,
        '--name',
        'Executable Native App',
        '--url',
        'https://native.example',
        '--logo-url',
        'https://native.example/logo.png',
        '--redirect-uri',
        'http://127.0.0.1/callback',
        '--token-endpoint-auth-method',
        'none',
      ],
      {},
      launcher,
    )
    expect(registered.client_secret).toBeUndefined()
    const config = await client.discovery(new URL(provider.server.url), registered.client_id, undefined, client.None(), {execute: [client.allowInsecureRequests]})
    const verifier = client.randomPKCECodeVerifier()
    const redirectUri = 'http://127.0.0.1:49213/callback'
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await new CookieBrowser(provider.server.url).authorize(url, MEMBER)
    const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, idTokenExpected: true})
    expect(tokens.expires_in).toBe(3600)
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!)
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(refreshed.claims()?.sub).toBe(provider.sub)
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({error: 'invalid_grant'})
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({error: 'invalid_grant'})
  })
})
