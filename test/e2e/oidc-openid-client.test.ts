import * as client from 'openid-client'
import {createRemoteJWKSet, jwtVerify} from 'jose'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {CookieBrowser, formFields, isSignInPage} from '../helpers/oidc-browser.js'
import {expectedAtHash, jwtHeader, MEMBER, memberClaims, startProvider, type Provider, type RelyingParty} from '../helpers/oidc.js'

/**
 * openid-client v6 as a relying party would use it out of the box: default discovery (OpenID
 * Connect Discovery, /.well-known/openid-configuration), the code flow with PKCE, nonce and state,
 * the ID token checked by the library, UserInfo, then RP-initiated logout. The browser is a cookie
 * jar on fetch, so the sign-in the consent page made is the one the logout ends. Everything runs
 * against the real `serve` (on Deno in the Deno run: the CLI launcher follows the runtime).
 */
describe('OpenID Connect with openid-client defaults', () => {
  let provider: Provider
  let rs: RelyingParty
  let es: RelyingParty
  const configs = new Map<RelyingParty, client.Configuration>()
  const insecure = {execute: [client.allowInsecureRequests]}

  beforeAll(async () => {
    provider = await startProvider()
    rs = provider.register('Default Alg RP')
    es = provider.register('Elliptic RP', 'ES256')
    // The defaults: discovery by the issuer URL alone, client_secret_basic, no algorithm option.
    configs.set(rs, await client.discovery(new URL(provider.server.url), rs.client_id, rs.client_secret, undefined, insecure))
    // This one also tells the library its ID tokens must be ES256 (anything else is refused).
    configs.set(
      es,
      await client.discovery(new URL(provider.server.url), es.client_id, {client_secret: es.client_secret, id_token_signed_response_alg: 'ES256'}, undefined, insecure),
    )
  })
  afterAll(async () => provider?.server.stop())

  const issuer = () => provider.server.url

  /** The code flow up to the tokens, as the library's README has it. */
  async function signOn(rp: RelyingParty, browser: CookieBrowser, extra: Record<string, string> = {}) {
    const config = configs.get(rp)!
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
    expect(callback.origin + callback.pathname).toBe(rp.redirectUri)
    const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state})
    return {tokens, nonce}
  }

  /** An authorize URL of the client's, for looking at what the browser is shown. */
  async function authorizeUrl(rp: RelyingParty, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(configs.get(rp)!, {
      redirect_uri: rp.redirectUri,
      scope: 'openid profile email',
      nonce: client.randomNonce(),
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    })
    return {url, verifier, state}
  }

  it('default discovery reads /.well-known/openid-configuration, the same document as the RFC 8414 one', async () => {
    const asked: string[] = []
    const recording: client.CustomFetch = (url, options) => {
      asked.push(url)
      return fetch(url, options as RequestInit)
    }
    const config = await client.discovery(new URL(issuer()), rs.client_id, rs.client_secret, undefined, {...insecure, [client.customFetch]: recording})
    expect(asked).toEqual([`${issuer()}/.well-known/openid-configuration`])

    const metadata = config.serverMetadata()
    expect(metadata).toMatchObject({
      issuer: issuer(),
      authorization_endpoint: `${issuer()}/oauth/authorize`,
      token_endpoint: `${issuer()}/oauth/token`,
      jwks_uri: `${issuer()}/oauth/jwks`,
      userinfo_endpoint: `${issuer()}/oauth/userinfo`,
      end_session_endpoint: `${issuer()}/oauth/end_session`,
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      response_types_supported: ['code'],
    })
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email']))
    expect(metadata.supportsPKCE()).toBe(true)
    const oidc = await (await fetch(`${issuer()}/.well-known/openid-configuration`)).json()
    const oauth = await (await fetch(`${issuer()}/.well-known/oauth-authorization-server`)).json()
    expect(oidc).toEqual(oauth)
  })

  for (const which of ['RS256', 'ES256'] as const) {
    it(`${which}: code flow with PKCE and nonce, the ID token's claims, UserInfo, then logout with id_token_hint ends the session`, async () => {
      const rp = which === 'RS256' ? rs : es
      const config = configs.get(rp)!
      const browser = new CookieBrowser(issuer())
      const {tokens, nonce} = await signOn(rp, browser)

      // The library checked signature algorithm, iss, aud, exp, iat, nonce and state; here is what it read.
      expect(tokens.token_type).toBe('bearer')
      expect(tokens.scope).toBe('openid profile email')
      const claims = tokens.claims()!
      expect(claims).toMatchObject({...memberClaims(provider.sub), iss: issuer(), aud: rp.client_id, nonce, at_hash: expectedAtHash(tokens.access_token)})
      expect(claims.exp - claims.iat).toBe(3600)
      expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60)
      expect(claims.auth_time).toEqual(expect.any(Number))
      expect(claims.auth_time!).toBeLessThanOrEqual(claims.iat)
      expect(claims.iat - claims.auth_time!).toBeLessThan(60)
      // NPI and the rest of the member record never become claims.
      expect(Object.keys(claims).sort()).toEqual(
        [
          'sub',
          'iss',
          'aud',
          'exp',
          'iat',
          'auth_time',
          'nonce',
          'at_hash',
          'sid',
          'name',
          'given_name',
          'family_name',
          'country_of_practice',
          'primary_specialty',
          'email',
          'email_verified',
        ].sort(),
      )

      // The signature, by the published key: the header names a kid the JWKS lists for this algorithm.
      const header = jwtHeader(tokens.id_token!)
      expect(header).toMatchObject({alg: which, typ: 'JWT'})
      const jwksUri = config.serverMetadata().jwks_uri!
      const jwks = (await (await fetch(jwksUri)).json()) as {keys: {kid: string; alg: string; use: string; kty: string; d?: string}[]}
      expect(jwks.keys.find((key) => key.kid === header.kid)).toMatchObject({alg: which, use: 'sig', kty: which === 'RS256' ? 'RSA' : 'EC'})
      expect(jwks.keys.every((key) => key.d === undefined)).toBe(true)
      const verified = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(jwksUri)), {issuer: issuer(), audience: rp.client_id, algorithms: [which]})
      expect(verified.payload).toEqual(claims)

      // UserInfo: the same claims, for the same subject (the library compares sub).
      const userInfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
      expect(userInfo).toEqual(memberClaims(provider.sub))
      const mismatch = await client.fetchUserInfo(config, tokens.access_token, `${claims.sub}0`).catch((error: client.ClientError) => error)
      expect(mismatch).toBeInstanceOf(client.ClientError)
      expect(mismatch).toMatchObject({code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED'})
      expect((mismatch as client.ClientError).cause).toMatchObject({cause: {attribute: 'sub', expected: `${claims.sub}0`, body: {sub: claims.sub}}})

      // RP-initiated logout with the ID token as hint: no question asked, straight back with state.
      const session = browser.cookie('mp_session')
      expect(session).toBeDefined()
      const logoutState = client.randomState()
      const endSession = client.buildEndSessionUrl(config, {id_token_hint: tokens.id_token!, post_logout_redirect_uri: rp.postLogoutRedirectUri, state: logoutState})
      expect(endSession.origin + endSession.pathname).toBe(`${issuer()}/oauth/end_session`)
      expect(endSession.searchParams.get('client_id')).toBe(rp.client_id)
      const loggedOut = await browser.request(endSession)
      expect(loggedOut.status).toBe(303)
      const back = new URL(loggedOut.headers.get('location')!)
      expect(back.origin + back.pathname).toBe(rp.postLogoutRedirectUri)
      expect(back.searchParams.get('state')).toBe(logoutState)
      expect(browser.cookie('mp_session')).toBeUndefined()

      // The session is over: the next authorize request shows the sign-in form again...
      const next = await authorizeUrl(rp)
      const page = await browser.open(next.url)
      expect(page.status).toBe(200)
      expect(isSignInPage(page.html)).toBe(true)
      // ...even to a browser that kept a copy of the old cookie (it ended on the server),
      const replayed = new CookieBrowser(issuer())
      replayed.setCookie('mp_session', session!, '/oauth')
      expect(isSignInPage((await replayed.open(next.url)).html)).toBe(true)
      // ...and prompt=none says login_required to the client, which the library reports.
      const silent = await authorizeUrl(rp, {prompt: 'none'})
      const answer = await browser.request(silent.url)
      expect(answer.status).toBe(302)
      const callback = new URL(answer.headers.get('location')!)
      expect(callback.searchParams.get('error')).toBe('login_required')
      await expect(client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: silent.verifier, expectedState: silent.state})).rejects.toMatchObject({
        error: 'login_required',
      })
    })
  }

  it('prompt=none gives a code to a signed-in member who allowed; max_age=0 and prompt=login ask for the password again; login_hint fills the e-mail', async () => {
    const browser = new CookieBrowser(issuer())
    const first = await signOn(rs, browser)
    const firstAuthTime = first.tokens.claims()!.auth_time!

    // No page at all: the redirect carries a code the library exchanges, with the same sign-in time.
    const silent = await authorizeUrl(rs, {prompt: 'none'})
    const answer = await browser.request(silent.url)
    expect(answer.status).toBe(302)
    const nonce = silent.url.searchParams.get('nonce')!
    const tokens = await client.authorizationCodeGrant(configs.get(rs)!, new URL(answer.headers.get('location')!), {
      pkceCodeVerifier: silent.verifier,
      expectedNonce: nonce,
      expectedState: silent.state,
      maxAge: 600,
    })
    expect(tokens.claims()).toMatchObject({sub: provider.sub, nonce, auth_time: firstAuthTime})

    // A client the member never allowed: consent_required.
    const stranger = provider.register('Stranger RP')
    configs.set(stranger, await client.discovery(new URL(issuer()), stranger.client_id, stranger.client_secret, undefined, insecure))
    const other = await browser.request((await authorizeUrl(stranger, {prompt: 'none'})).url)
    expect(new URL(other.headers.get('location')!).searchParams.get('error')).toBe('consent_required')

    for (const fresh of [{max_age: '0'}, {prompt: 'login'}] as Record<string, string>[]) {
      const {url} = await authorizeUrl(rs, {...fresh, login_hint: MEMBER.email})
      const page = await browser.open(url)
      expect(isSignInPage(page.html), JSON.stringify(fresh)).toBe(true)
      expect(page.html).toContain(`value="${MEMBER.email}"`)
    }
    // Signing in again moves auth_time (whole seconds: wait for the next one).
    await new Promise((resolve) => setTimeout(resolve, 1100 - (Date.now() % 1000)))
    const again = await signOn(rs, browser, {prompt: 'login'})
    expect(again.tokens.claims()!.auth_time!).toBeGreaterThan(firstAuthTime)
  })

  it('logout without id_token_hint asks the member first; an unregistered post_logout_redirect_uri goes nowhere', async () => {
    const browser = new CookieBrowser(issuer())
    const {tokens} = await signOn(es, browser)
    const config = configs.get(es)!

    const unregistered = await browser.request(client.buildEndSessionUrl(config, {id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${issuer()}/elsewhere`}))
    expect(unregistered.status).toBe(400)
    expect(unregistered.headers.get('location')).toBeNull()
    // Still signed in: the consent page, not the sign-in form.
    expect(isSignInPage((await browser.open((await authorizeUrl(es)).url)).html)).toBe(false)

    const state = client.randomState()
    const asked = await browser.open(client.buildEndSessionUrl(config, {post_logout_redirect_uri: es.postLogoutRedirectUri, state}))
    expect(asked.status).toBe(200)
    expect(asked.html).toContain('Sign out of medpanel?')
    expect(asked.html).toContain('Elliptic RP')
    expect(isSignInPage((await browser.open((await authorizeUrl(es)).url)).html)).toBe(false)

    const confirmed = await browser.post('/oauth/end_session', formFields(asked.html, '/oauth/end_session'))
    expect(confirmed.status).toBe(303)
    const back = new URL(confirmed.headers.get('location')!)
    expect(back.origin + back.pathname).toBe(es.postLogoutRedirectUri)
    expect(back.searchParams.get('state')).toBe(state)
    expect(isSignInPage((await browser.open((await authorizeUrl(es)).url)).html)).toBe(true)
  })
})
