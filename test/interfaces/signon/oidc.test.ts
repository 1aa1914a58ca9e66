import {createHash} from 'node:crypto'
import {createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet} from 'jose'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {authorizeParams, authorizeUrl, bearer, type CookieJar, csrfOf, exchange, ORIGIN, PASSWORD, REDIRECT, setupClientAndMember, signIn} from './flow.js'

const ISSUER = 'http://localhost'
const LOGOUT_TO = 'https://client.example/signed-out'

describe('OpenID Connect', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let memberId: number
  beforeEach(async () => {
    ctx = await freshApp()
    const setup = await setupClientAndMember(ctx)
    client = setup.client
    memberId = setup.member.user_id
    await ctx.db
      .updateTable('clients')
      .set({post_logout_redirect_uris: JSON.stringify([LOGOUT_TO]) as never})
      .where('id', '=', client.client_id)
      .execute()
  })
  afterEach(async () => ctx.store.close())

  const oidc = (extra: Record<string, string> = {}) => authorizeParams(client.client_id, {scope: 'openid profile email', nonce: 'n-0S6_WzA2Mj', ...extra})

  /** Signs in, allows, and exchanges the code: the token answer, and the jar still signed in. */
  async function codeFlow(params: Record<string, string>) {
    const {jar, csrf} = await signIn(ctx, params)
    const allowed = jar.take(await ctx.app.request('/oauth/authorize', form({...params, csrf_token: csrf, decision: 'allow'}, {...jar.header(), origin: ORIGIN})))
    expect(allowed.status).toBe(302)
    const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret})
    expect(res.status).toBe(200)
    return {tokens: (await res.json()) as Record<string, unknown> & {access_token: string; id_token?: string}, jar}
  }

  async function verify(idToken: string) {
    const jwks = (await (await ctx.app.request('/oauth/jwks')).json()) as JSONWebKeySet
    return jwtVerify(idToken, createLocalJWKSet(jwks), {issuer: ISSUER, audience: client.client_id, currentDate: ctx.clock.now()})
  }

  it('serves the OpenID configuration: the RFC 8414 document, with the OpenID fields', async () => {
    const oidcDoc = (await (await ctx.app.request('/.well-known/openid-configuration')).json()) as Record<string, unknown>
    const oauthDoc = await (await ctx.app.request('/.well-known/oauth-authorization-server')).json()
    expect(oidcDoc).toEqual(oauthDoc)
    expect(oidcDoc).toMatchObject({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/oauth/jwks`,
      userinfo_endpoint: `${ISSUER}/oauth/userinfo`,
      end_session_endpoint: `${ISSUER}/oauth/end_session`,
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
      subject_types_supported: ['public'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access', 'pulses'],
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    })
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/oauth/jwks']) {
      const res = await ctx.app.request(path, {headers: {origin: 'https://spa.example'}})
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*')
    }
    const preflight = await ctx.app.request('/oauth/userinfo', {
      method: 'OPTIONS',
      headers: {origin: 'https://spa.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization'},
    })
    // UserInfo answers a member's claims: only the origins a client registered may read it
    // (test/interfaces/signon/public-clients.test.ts), never any origin.
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull()
    expect(oidcDoc.claims_supported).toEqual(expect.arrayContaining(['sub', 'nonce', 'auth_time', 'at_hash', 'name', 'email', 'email_verified']))
  })

  it('issues an RS256 ID token with the nonce, auth_time, at_hash and the claims the scopes allow', async () => {
    const signedInAt = Math.floor(ctx.clock.now().getTime() / 1000)
    const {tokens} = await codeFlow(oidc())
    expect(Object.keys(tokens)).toEqual(['access_token', 'token_type', 'expires_in', 'scope', 'created_at', 'id_token'])
    const {payload, protectedHeader} = await verify(tokens.id_token!)
    expect(protectedHeader.alg).toBe('RS256')
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    const atHash = createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url')
    expect(payload).toEqual({
      iss: ISSUER,
      sub: String(memberId),
      aud: client.client_id,
      iat: now,
      exp: now + 3600,
      auth_time: signedInAt,
      nonce: 'n-0S6_WzA2Mj',
      at_hash: atHash,
      name: 'Ana Ruiz',
      given_name: 'Ana',
      family_name: 'Ruiz',
      country_of_practice: 'US',
      primary_specialty: 'Oncology',
      email: 'ana@clinic.example',
      email_verified: false,
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    })
  })

  it('puts only what the scopes allow in the ID token, and no nonce when none was sent', async () => {
    const params = oidc({scope: 'openid'})
    delete params.nonce
    const {tokens} = await codeFlow(params)
    const {payload} = await verify(tokens.id_token!)
    expect(Object.keys(payload).sort()).toEqual(['at_hash', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'sid', 'sub'])
  })

  it('signs with ES256 for a client registered for it, under another key', async () => {
    await ctx.db.updateTable('clients').set({id_token_alg: 'ES256'}).where('id', '=', client.client_id).execute()
    const {tokens} = await codeFlow(oidc())
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256')
    await verify(tokens.id_token!)
    const jwks = (await (await ctx.app.request('/oauth/jwks')).json()) as JSONWebKeySet
    // Every algorithm's key is published, whichever signed first.
    expect(jwks.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256'])
    expect(jwks.keys.find((key) => key.alg === 'ES256')!.kid).toBe(decodeProtectedHeader(tokens.id_token!).kid)
    for (const key of jwks.keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret)
  })

  it('answers a request without openid exactly as before: no id_token', async () => {
    const {tokens} = await codeFlow(authorizeParams(client.client_id, {nonce: 'ignored', prompt: 'none'}))
    expect(Object.keys(tokens)).toEqual(['access_token', 'token_type', 'expires_in', 'scope', 'created_at'])
  })

  it('prompt=none: login_required without a session, consent_required before the first allow, a code after', async () => {
    const noSession = await ctx.app.request(authorizeUrl(oidc({prompt: 'none'})))
    expect(noSession.status).toBe(302)
    const refused = new URL(noSession.headers.get('location')!)
    expect(refused.searchParams.get('error')).toBe('login_required')
    expect(refused.searchParams.get('state')).toBe('st-123')
    expect(refused.searchParams.get('iss')).toBe(ISSUER)

    const {jar} = await signIn(ctx, oidc())
    const noConsent = await ctx.app.request(authorizeUrl(oidc({prompt: 'none'})), {headers: jar.header()})
    expect(new URL(noConsent.headers.get('location')!).searchParams.get('error')).toBe('consent_required')

    await codeFlow(oidc())
    const {jar: again} = await signIn(ctx, oidc())
    const silent = await ctx.app.request(authorizeUrl(oidc({prompt: 'none'})), {headers: again.header()})
    expect(silent.status).toBe(302)
    expect(new URL(silent.headers.get('location')!).searchParams.get('code')).toBeTruthy()
    // Asking for more than was allowed is consent again.
    const wider = await ctx.app.request(authorizeUrl(oidc({prompt: 'none', scope: 'openid profile email'})), {headers: again.header()})
    expect(new URL(wider.headers.get('location')!).searchParams.get('code')).toBeTruthy()
    const bad = await ctx.app.request(authorizeUrl(oidc({prompt: 'none login'})), {headers: again.header()})
    expect(new URL(bad.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')
  })

  it('prompt=login and max_age ask a signed-in member to sign in again, once', async () => {
    const {jar} = await signIn(ctx, oidc())
    const consent = await (await ctx.app.request(authorizeUrl(oidc()), {headers: jar.header()})).text()
    expect(consent).toContain('Allow')
    for (const extra of [{prompt: 'login'}, {max_age: '0'}] as Record<string, string>[]) {
      ctx.clock.advance(5)
      const page = jar.take(await ctx.app.request(authorizeUrl(oidc(extra)), {headers: jar.header()}))
      const html = await page.text()
      expect(html).toContain('name="password"')
      const fields = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]))
      const res = jar.take(await ctx.app.request('/oauth/session', form({...fields, email: 'ana@clinic.example', password: PASSWORD}, {...jar.header(), origin: ORIGIN})))
      expect(res.status).toBe(303)
      const next = res.headers.get('location')!
      expect(next).not.toContain('prompt=login')
      expect(next).not.toContain('max_age')
      ctx.clock.advance(2)
      expect(await (await ctx.app.request(next, {headers: jar.header()})).text()).toContain('Allow')
    }
    // A sign-in younger than max_age does.
    expect(await (await ctx.app.request(authorizeUrl(oidc({max_age: '3600'})), {headers: jar.header()})).text()).toContain('Allow')
  })

  it('fills the e-mail from login_hint, and refuses request objects and a malformed max_age on the redirect', async () => {
    const page = await (await ctx.app.request(authorizeUrl(oidc({login_hint: 'ana@clinic.example'})))).text()
    expect(page).toContain('value="ana@clinic.example"')
    for (const [extra, error] of [
      [{request: 'eyJhbGciOiJub25lIn0.e30.'}, 'request_not_supported'],
      [{request_uri: 'https://client.example/r'}, 'request_uri_not_supported'],
      [{max_age: '-1'}, 'invalid_request'],
      [{prompt: 'sometimes'}, 'invalid_request'],
    ] as const) {
      const res = await ctx.app.request(authorizeUrl(oidc(extra)))
      expect(res.status).toBe(302)
      expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe(error)
    }
  })

  it('UserInfo answers the claims by GET and POST, and refuses as RFC 6750 says', async () => {
    const {tokens} = await codeFlow(oidc({scope: 'openid email'}))
    for (const method of ['GET', 'POST']) {
      const res = await ctx.app.request('/oauth/userinfo', {method, headers: {authorization: `Bearer ${tokens.access_token}`}})
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(await res.json()).toEqual({sub: String(memberId), email: 'ana@clinic.example', email_verified: false})
    }
    const none = await ctx.app.request('/oauth/userinfo')
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm="medpanel", error="invalid_request"/)
    const wrong = await ctx.app.request('/oauth/userinfo', bearer('not-a-token'))
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    const plain = await codeFlow(authorizeParams(client.client_id))
    const noOpenid = await ctx.app.request('/oauth/userinfo', bearer(plain.tokens.access_token))
    expect(noOpenid.status).toBe(403)
    expect(noOpenid.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="openid"/)
    expect((await ctx.app.request('/oauth/userinfo', {method: 'PUT'})).status).toBe(405)
  })

  it('logout with an id_token_hint of the signed-in member ends the session and goes back with state', async () => {
    const {tokens, jar} = await codeFlow(oidc())
    const query = new URLSearchParams({id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGOUT_TO, state: 'bye-1'})
    const res = jar.take(await ctx.app.request(`/oauth/end_session?${query}`, {headers: jar.header()}))
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe(`${LOGOUT_TO}?state=bye-1`)
    // The session ended on the server: even the old cookie opens nothing.
    expect(await (await ctx.app.request(authorizeUrl(oidc()), {headers: jar.header()})).text()).toContain('name="password"')
  })

  it('logout without a proof of the member asks first, and signs out only on the confirming form', async () => {
    const {jar} = await signIn(ctx, oidc())
    const asked = jar.take(
      await ctx.app.request(`/oauth/end_session?client_id=${client.client_id}&post_logout_redirect_uri=${encodeURIComponent(LOGOUT_TO)}`, {headers: jar.header()}),
    )
    expect(asked.status).toBe(200)
    const html = await asked.text()
    expect(html).toContain('Sign out of medpanel?')
    // Browsers hold a form's redirect to form-action: the confirming form may lead to the client.
    expect(asked.headers.get('content-security-policy')).toContain("form-action 'self' https://client.example")
    expect(asked.headers.get('x-frame-options')).toBe('DENY')
    expect(await (await ctx.app.request(authorizeUrl(oidc()), {headers: jar.header()})).text()).toContain('Allow')
    const forged = await ctx.app.request('/oauth/end_session', form({client_id: client.client_id, confirm: 'yes', csrf_token: 'forged'}, jar.header()))
    expect(forged.status).toBe(403)
    const confirmed = jar.take(
      await ctx.app.request('/oauth/end_session', form({client_id: client.client_id, post_logout_redirect_uri: LOGOUT_TO, confirm: 'yes', csrf_token: csrfOf(html)}, jar.header())),
    )
    expect(confirmed.status).toBe(303)
    expect(confirmed.headers.get('location')).toBe(LOGOUT_TO)
    expect(await (await ctx.app.request(authorizeUrl(oidc()), {headers: jar.header()})).text()).toContain('name="password"')
  })

  it('logout with defaults goes back to a redirect URI or its site root, with nothing else registered', async () => {
    await ctx.db
      .updateTable('clients')
      .set({post_logout_redirect_uris: '[]' as never})
      .where('id', '=', client.client_id)
      .execute()
    const logout = async (jar: CookieJar, idToken: string, to: string) =>
      jar.take(await ctx.app.request(`/oauth/end_session?${new URLSearchParams({id_token_hint: idToken, post_logout_redirect_uri: to, state: 'bye'})}`, {headers: jar.header()}))
    const signedOut = async (jar: CookieJar) => (await (await ctx.app.request(authorizeUrl(oidc()), {headers: jar.header()})).text()).includes('name="password"')
    // Anything but the redirect URIs and their roots is still compared exactly: an error page, and
    // the member stays signed in.
    for (const other of [
      'https://client.example/elsewhere',
      'https://client.example/callback/',
      'https://client.example:8443/',
      'https://evil.example/',
      'http://client.example/',
    ]) {
      const {tokens, jar} = await codeFlow(oidc())
      const refused = await logout(jar, tokens.id_token!, other)
      expect(refused.status, other).toBe(400)
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/)
      expect(await signedOut(jar), other).toBe(false)
    }
    for (const [to, back] of [
      [REDIRECT, `${REDIRECT}?state=bye`],
      ['https://client.example/', 'https://client.example/?state=bye'],
      ['https://client.example', 'https://client.example/?state=bye'],
    ]) {
      const {tokens, jar} = await codeFlow(oidc())
      const res = await logout(jar, tokens.id_token!, to!)
      expect(res.status, to).toBe(303)
      expect(res.headers.get('location')).toBe(back)
      expect(await signedOut(jar), to).toBe(true)
    }
  })

  it('logout to a native app: its redirect URI on any loopback port, and its private-use scheme, with the confirming form allowed there', async () => {
    const native = await registerTestClient(
      ctx.store,
      {name: 'Acme Mobile', url: 'https://client.example', redirect_uris: ['http://127.0.0.1/callback', 'com.example.app:/callback'], token_endpoint_auth_method: 'none'},
      ctx.clock.now(),
    )
    const {jar} = await signIn(ctx, oidc())
    const ask = async (to: string) =>
      ctx.app.request(`/oauth/end_session?${new URLSearchParams({client_id: native.client_id, post_logout_redirect_uri: to})}`, {headers: jar.header()})
    for (const to of ['http://127.0.0.1:53682/callback', 'http://127.0.0.1:53682/']) expect((await ask(to)).status, to).toBe(200)
    expect((await ask('http://127.0.0.1:53682/other')).status).toBe(400)
    const page = await ask('com.example.app:/callback')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' com.example.app:")
    const confirmed = await ctx.app.request(
      '/oauth/end_session',
      form({client_id: native.client_id, post_logout_redirect_uri: 'com.example.app:/callback', confirm: 'yes', csrf_token: csrfOf(await page.text())}, jar.header()),
    )
    expect(confirmed.status).toBe(303)
    expect(confirmed.headers.get('location')).toBe('com.example.app:/callback')
  })

  it('logout refuses a hint it did not sign and a post-logout URI not registered, as a page', async () => {
    const {tokens} = await codeFlow(oidc())
    const [header, payload] = tokens.id_token!.split('.')
    const forged = await ctx.app.request(`/oauth/end_session?id_token_hint=${header}.${payload}.AAAA`)
    expect(forged.status).toBe(400)
    expect(forged.headers.get('content-type')).toMatch(/^text\/html/)
    const elsewhere = await ctx.app.request(`/oauth/end_session?id_token_hint=${tokens.id_token}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`)
    expect(elsewhere.status).toBe(400)
    expect(await elsewhere.text()).toContain('not registered')
    const signedOut = await ctx.app.request('/oauth/end_session')
    expect(signedOut.status).toBe(200)
    expect(await signedOut.text()).toContain('You are signed out')
  })
})
