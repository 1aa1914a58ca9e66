import * as client from 'openid-client'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {clientRegistration, MEMBER, memberClaims, startProvider, type Provider} from '../helpers/oidc.js'

interface Registered {
  client_id: string
  client_secret?: string
  redirect_uris: string[]
  token_endpoint_auth_method: string
  token_ttl: number | null
}

/**
 * A native app (RFC 8252) as openid-client v6 builds one: a public client, registered with
 * `--token-endpoint-auth-method none` and so without a secret, authenticating with `client.None()`
 * (its client_id in the form body). It registered `http://127.0.0.1/callback` without a port and,
 * for each sign-in, listens on a loopback port the system picks and sends
 * `http://127.0.0.1:<port>/callback` (RFC 8252 §7.3: any port matches); the browser's redirect is
 * handed to that listener, as the system browser would. Scope `openid profile offline_access` with
 * PKCE S256 and a nonce: the app gets a refresh token and an access token that expires, refreshes
 * with rotation (a refresh token is single-use, and replaying one ends its whole family), reads
 * UserInfo and revokes. Also what a public client may not do: leave PKCE out, and what only a
 * public client may register: a private-use URI scheme (RFC 8252 §7.1). Everything runs against
 * the real `serve`; the browser is a cookie jar on fetch (helpers/oidc-browser.ts) that signs in
 * and allows on medpanel's pages.
 */
describe('a native app with openid-client, a public client on a loopback redirect', () => {
  const SCOPE = 'openid profile offline_access'
  let provider: Provider
  let app: Registered
  let config: client.Configuration
  const issuer = () => provider.server.url

  /** Registers a client the CLI's way; `extra` adds flags (--token-endpoint-auth-method none). */
  function register(name: string, redirectUri: string, extra: string[] = []): Registered {
    return cliJson(clientRegistration(provider.db, name, redirectUri, extra))
  }

  /** openid-client's configuration for a public client: discovery, then client.None(). */
  function configure(registered: Registered): Promise<client.Configuration> {
    return client.discovery(new URL(issuer()), registered.client_id, undefined, client.None(), {execute: [client.allowInsecureRequests]})
  }

  beforeAll(async () => {
    provider = await startProvider()
    // No port, no secret, no --token-ttl: the defaults plus a public client's auth method.
    app = register('Native App', 'http://127.0.0.1/callback', ['--token-endpoint-auth-method', 'none'])
    config = await configure(app)
  })
  afterAll(async () => provider?.server.stop())

  /**
   * The app's side of the redirect: an HTTP listener on 127.0.0.1 on a port the system gives it,
   * which takes one callback and remembers the URL it was called on.
   */
  async function loopbackListener(): Promise<{redirectUri: string; received: Promise<URL>; close: () => Promise<void>}> {
    let deliver!: (url: URL) => void
    const received = new Promise<URL>((resolve) => {
      deliver = resolve
    })
    const server = createServer((req, res) => {
      const url = new URL(req.url!, redirectUri)
      if (url.pathname !== '/callback') {
        res.writeHead(404, {connection: 'close'}).end()
        return
      }
      res.writeHead(200, {'content-type': 'text/plain; charset=utf-8', connection: 'close'}).end('Signed in. You can close this window.')
      deliver(url)
    })
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`
    return {redirectUri, received, close: () => new Promise<void>((closed) => server.close(() => closed()))}
  }

  /**
   * A whole sign-in as the app does it: listen, send the browser to the authorize URL (PKCE S256,
   * state, nonce), the browser signs in and allows (or comes straight back when the member allowed
   * before), its redirect reaches the listener, the library exchanges the code.
   */
  async function signIn(browser = new CookieBrowser(issuer())) {
    const listener = await loopbackListener()
    try {
      const verifier = client.randomPKCECodeVerifier()
      const state = client.randomState()
      const nonce = client.randomNonce()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: listener.redirectUri,
        scope: SCOPE,
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
      const redirect = await browser.authorize(url, MEMBER)
      expect(redirect.origin + redirect.pathname).toBe(listener.redirectUri)
      // The system browser opens the redirect: the app's listener receives it.
      expect((await fetch(redirect)).status).toBe(200)
      const callback = await listener.received
      const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce})
      return {tokens, nonce, redirectUri: listener.redirectUri}
    } finally {
      await listener.close()
    }
  }

  it('registers the public client without a secret and keeps the port-less loopback redirect URI', () => {
    expect(app.client_secret).toBeUndefined()
    expect(app).not.toHaveProperty('client_secret')
    expect(app.token_endpoint_auth_method).toBe('none')
    expect(app.redirect_uris).toEqual(['http://127.0.0.1/callback'])
    expect(app.token_ttl).toBeNull()
  })

  it('signs in on an ephemeral loopback port with PKCE and no secret: an ID token, an access token that expires, and a refresh token', async () => {
    const {tokens, nonce, redirectUri} = await signIn()
    // The port the system gave this sign-in, which was never registered.
    expect(new URL(redirectUri).port).not.toBe('')
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.scope?.split(' ').sort()).toEqual(['offline_access', 'openid', 'profile'])
    expect(tokens.refresh_token).toEqual(expect.any(String))
    expect(tokens.refresh_token).not.toBe(tokens.access_token)
    // The client has no --token-ttl, yet a token that comes with a refresh token expires (an hour).
    expect(tokens.expires_in).toEqual(expect.any(Number))
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.claims()).toMatchObject({sub: provider.sub, iss: issuer(), aud: app.client_id, nonce})
  })

  it('refreshes twice with client.None(), each answer a new refresh token; replaying a spent one is invalid_grant and ends the family', async () => {
    const {tokens: first} = await signIn()
    const sub = first.claims()!.sub

    const second = await client.refreshTokenGrant(config, first.refresh_token!)
    expect(second.refresh_token).toEqual(expect.any(String))
    expect(second.refresh_token).not.toBe(first.refresh_token)
    expect(second.access_token).not.toBe(first.access_token)
    expect(second.expires_in).toBe(3600)
    // A new ID token for the same member, without the sign-in's nonce.
    expect(second.claims()).toMatchObject({sub, iss: issuer(), aud: app.client_id})
    expect(second.claims()!.nonce).toBeUndefined()
    // The new access token works.
    expect(await client.fetchUserInfo(config, second.access_token, sub)).toMatchObject({sub})

    const third = await client.refreshTokenGrant(config, second.refresh_token!)
    expect(third.refresh_token).toEqual(expect.any(String))
    expect(new Set([first.refresh_token, second.refresh_token, third.refresh_token]).size).toBe(3)
    expect(third.access_token).not.toBe(second.access_token)
    expect(third.claims()).toMatchObject({sub})

    // Each refresh token is single-use: the first one again is refused...
    await expect(client.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({error: 'invalid_grant', status: 400})
    // ...and that replay ended the family: even the newest one is refused now.
    await expect(client.refreshTokenGrant(config, third.refresh_token!)).rejects.toMatchObject({error: 'invalid_grant', status: 400})
  })

  it('UserInfo answers the profile scope’s claims for the access token, to the subject of the ID token', async () => {
    const {tokens} = await signIn()
    const {email: _email, email_verified: _verified, ...profile} = memberClaims(provider.sub)
    expect(await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub)).toEqual(profile)
  })

  it('client.tokenRevocation of a fresh refresh token ends it; an unknown token is revoked without complaint', async () => {
    // A new browser, so a new sign-in (the member already allowed this client: no consent page).
    const {tokens} = await signIn(new CookieBrowser(issuer()))
    await expect(client.tokenRevocation(config, tokens.refresh_token!)).resolves.toBeUndefined()
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({error: 'invalid_grant', status: 400})
    await expect(client.tokenRevocation(config, 'not-a-token-medpanel-ever-issued')).resolves.toBeUndefined()
  })

  it('a request without PKCE from the public client is sent back to the app with invalid_request', async () => {
    const listener = await loopbackListener()
    try {
      const state = client.randomState()
      // What a confidential client may send: no code_challenge.
      const url = client.buildAuthorizationUrl(config, {redirect_uri: listener.redirectUri, scope: SCOPE, state, nonce: client.randomNonce()})
      const answer = await new CookieBrowser(issuer()).open(url)
      expect(answer.status).toBe(302)
      const back = new URL(answer.location!)
      expect(back.origin + back.pathname).toBe(listener.redirectUri)
      expect(back.searchParams.get('error')).toBe('invalid_request')
      expect(back.searchParams.get('state')).toBe(state)
      expect(back.searchParams.get('code')).toBeNull()
      await expect(client.authorizationCodeGrant(config, back, {expectedState: state})).rejects.toMatchObject({error: 'invalid_request'})
    } finally {
      await listener.close()
    }
  })

  it('only the loopback port may vary: localhost, another path or https on the same port are no registered redirect', async () => {
    const listener = await loopbackListener()
    try {
      const port = new URL(listener.redirectUri).port
      for (const redirectUri of [`http://localhost:${port}/callback`, `http://127.0.0.1:${port}/elsewhere`, `https://127.0.0.1:${port}/callback`]) {
        const verifier = client.randomPKCECodeVerifier()
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: SCOPE,
          state: client.randomState(),
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        })
        const answer = await new CookieBrowser(issuer()).open(url)
        // Never redirected to an unregistered URI: the error page shows at medpanel.
        expect(answer.status, redirectUri).toBe(400)
        expect(answer.location, redirectUri).toBeNull()
      }
    } finally {
      await listener.close()
    }
  })

  it('a private-use URI scheme is registered for a public client, and the code comes back on it', async () => {
    const mobile = register('Mobile App', 'com.example.mobile:/oauth2redirect', ['--token-endpoint-auth-method', 'none'])
    expect(mobile.redirect_uris).toEqual(['com.example.mobile:/oauth2redirect'])
    expect(mobile).not.toHaveProperty('client_secret')

    const mobileConfig = await configure(mobile)
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(mobileConfig, {
      redirect_uri: 'com.example.mobile:/oauth2redirect',
      scope: SCOPE,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await new CookieBrowser(issuer()).authorize(url, MEMBER)
    expect(`${callback.protocol}${callback.pathname}`).toBe('com.example.mobile:/oauth2redirect')
    const tokens = await client.authorizationCodeGrant(mobileConfig, callback, {pkceCodeVerifier: verifier, expectedState: state})
    expect(tokens.claims()).toMatchObject({sub: provider.sub, aud: mobile.client_id})
    expect(tokens.refresh_token).toEqual(expect.any(String))
  })

  it('a private-use URI scheme is refused for a confidential client: exit 1 and one Error: line', () => {
    const refused = cli(clientRegistration(provider.db, 'Confidential App', 'com.example.confidential:/callback'))
    expect(refused.status).toBe(1)
    expect(refused.stdout).toBe('')
    const lines = refused.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^Error: .*private-use URI scheme/)
  })
})
