import {readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {createRequire} from 'node:module'
import type {AddressInfo} from 'node:net'
import {dirname, join} from 'node:path'
import type {Browser, BrowserContext, Page, Request} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {browserAvailable, launchBrowser} from '../helpers/browser.js'
import {cliJson} from '../helpers/cli.js'
import {clientRegistration, MEMBER, memberClaims, startProvider, type Provider} from '../helpers/oidc.js'

interface Registered {
  client_id: string
  client_secret?: string
  token_endpoint_auth_method: string
}

/** What the pages report of an oidc-client-ts User (window.summary in the app script). */
interface UserSummary {
  access_token: string
  refresh_token: string | null
  id_token: string
  token_type: string
  scope: string
  expires_in: number
  expired: boolean
  state: unknown
  profile: Record<string, unknown>
}

/** A call's value, or what it threw (with the OAuth error code of an ErrorResponse). */
type Outcome<T> = {ok: true; value: T} | {ok: false; error: string; code?: string}

/** What medpanel answered the app's page, as Chromium saw it (preflights are not shown). */
interface Exchange {
  method: string
  url: string
  postData: string | null
  status?: number
  allowOrigin?: string
  failure?: string
}

/**
 * A single-page app on its own origin with oidc-client-ts, the library a browser app uses for
 * OpenID Connect, in Debian's Chromium: a public client (registered with `--token-endpoint-auth-
 * method none`, no secret), a UserManager given only authority, client_id, redirect_uri,
 * post_logout_redirect_uri and scope `openid profile offline_access` (so the library's defaults:
 * the code flow, PKCE S256, discovery by /.well-known/openid-configuration, client_id in the token
 * request's body, tokens in sessionStorage). The app's pages are served from 127.0.0.1 on a port of
 * their own, so every call the library makes to medpanel is cross-origin and must pass CORS: the
 * discovery document, the token endpoint (code and refresh token), UserInfo with a bearer token
 * (a preflight) and revocation. The member signs in and allows on medpanel's real pages; then the
 * app reads UserInfo, refreshes with its refresh token (signinSilent uses it instead of an iframe),
 * signs in again without a consent page (remembered consent), revokes, and logs out with
 * signoutRedirect (RP-initiated logout) to its post-logout page. A page on an origin no client
 * registered may read discovery but not the token endpoint. Every step waits on a navigation or on
 * what the page reports, never on time.
 */
describe.skipIf(!browserAvailable)('oidc-client-ts in Chromium: a single-page app on another origin as a public client', () => {
  const SCOPE = 'openid profile offline_access'
  let provider: Provider
  let appServer: Server
  let strangerServer: Server
  let appOrigin: string
  let strangerOrigin: string
  let registered: Registered
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** The UserManager's settings: only what a browser app must say, the rest the library's defaults. */
  let settings: {authority: string; client_id: string; redirect_uri: string; post_logout_redirect_uri: string; scope: string}
  /** Every request the app's page made to medpanel, with its answer. */
  const exchanges: Exchange[] = []
  /** Every page the app's tab was sent to at medpanel (redirects included), in order. */
  const navigations: URL[] = []
  /** The page's console (the library logs its warnings and errors there) and uncaught errors. */
  const consoleLines: string[] = []

  const library = readFileSync(join(dirname(createRequire(import.meta.url).resolve('oidc-client-ts/package.json')), 'dist/browser/oidc-client-ts.js'), 'utf8')

  /**
   * The app's pages: the library's browser build (an IIFE defining `oidc`), one script that makes
   * the UserManager, and three pages: / (sign-in and logout buttons), /callback (the redirect_uri:
   * signinRedirectCallback) and /signed-out (the post_logout_redirect_uri: signoutRedirectCallback).
   * Each page puts what its call produced in window.outcome.
   */
  function appPage(path: string): {status: number; type: string; body: string} {
    const settle = (call: string) =>
      `${call}.then((value) => { window.outcome = {ok: true, value: value && value.profile ? summary(value) : value && {userState: value.userState, error: value.error ?? null}} }, (error) => { window.outcome = {ok: false, error: String(error)} })`
    const scripts: Record<string, string> = {
      '/': '',
      '/callback': settle('mgr.signinRedirectCallback()'),
      '/signed-out': settle('mgr.signoutRedirectCallback()'),
    }
    if (path === '/oidc-client-ts.js') return {status: 200, type: 'text/javascript', body: library}
    if (path === '/app.js') {
      return {
        status: 200,
        type: 'text/javascript',
        body: `oidc.Log.setLogger(console)
oidc.Log.setLevel(oidc.Log.WARN)
window.mgr = new oidc.UserManager(${JSON.stringify(settings)})
window.summary = (user) => user && {access_token: user.access_token, refresh_token: user.refresh_token ?? null, id_token: user.id_token, token_type: user.token_type, scope: user.scope, expires_in: user.expires_in, expired: user.expired, state: user.state ?? null, profile: user.profile}
`,
      }
    }
    if (!(path in scripts)) return {status: 404, type: 'text/plain', body: 'not found'}
    return {
      status: 200,
      type: 'text/html; charset=utf-8',
      body: `<!doctype html>
<html><head><meta charset="utf-8"><title>Clinic SPA</title>
<script src="/oidc-client-ts.js"></script>
<script src="/app.js"></script>
</head><body>
<h1>Clinic SPA</h1>
<button id="login" onclick="mgr.signinRedirect({state: 'app-state'})">Sign in with medpanel</button>
<button id="logout" onclick="mgr.signoutRedirect({state: 'bye-state'})">Sign out</button>
<script>${scripts[path]}</script>
</body></html>`,
    }
  }

  async function listen(server: Server): Promise<string> {
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  beforeAll(async () => {
    provider = await startProvider()
    const serve = (): Server =>
      createServer((req, res) => {
        const {status, type, body} = appPage(new URL(req.url!, 'http://app.invalid').pathname)
        res.writeHead(status, {'content-type': type, 'cache-control': 'no-store'}).end(body)
      })
    appServer = serve()
    strangerServer = serve()
    // Another port is another origin: medpanel on one loopback port, the app on another.
    appOrigin = await listen(appServer)
    strangerOrigin = await listen(strangerServer)
    registered = cliJson(
      clientRegistration(provider.db, 'Clinic SPA', `${appOrigin}/callback`, ['--post-logout-redirect-uri', `${appOrigin}/signed-out`, '--token-endpoint-auth-method', 'none']),
    )
    settings = {
      authority: provider.server.url,
      client_id: registered.client_id,
      redirect_uri: `${appOrigin}/callback`,
      post_logout_redirect_uri: `${appOrigin}/signed-out`,
      scope: SCOPE,
    }

    browser = await launchBrowser()
    context = await browser.newContext()
    page = await context.newPage()
    page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`))
    page.on('pageerror', (error) => consoleLines.push(`pageerror: ${error.message}`))
    const byRequest = new WeakMap<Request, Exchange>()
    page.on('request', (request) => {
      if (request.url().startsWith(provider.server.url) && request.isNavigationRequest()) navigations.push(new URL(request.url()))
      if (request.url().startsWith(provider.server.url) && request.resourceType() !== 'document') {
        const exchange: Exchange = {method: request.method(), url: request.url(), postData: request.postData()}
        byRequest.set(request, exchange)
        exchanges.push(exchange)
      }
    })
    page.on('response', (response) => {
      const exchange = byRequest.get(response.request())
      if (exchange) Object.assign(exchange, {status: response.status(), allowOrigin: response.headers()['access-control-allow-origin']})
    })
    page.on('requestfailed', (request) => {
      const exchange = byRequest.get(request)
      if (exchange) exchange.failure = request.failure()?.errorText ?? 'failed'
    })
  })
  afterAll(async () => {
    await browser?.close()
    for (const server of [appServer, strangerServer]) if (server?.listening) await new Promise((closed) => server.close(closed))
    await provider?.server.stop()
  })

  /** What went on, for an assertion's message: the requests to medpanel and the page's console. */
  const diagnosis = () => JSON.stringify({exchanges, console: consoleLines}, null, 2)

  /** Waits for the page's window.outcome and answers it. */
  async function outcome<T>(): Promise<Outcome<T>> {
    await page.waitForFunction(() => (window as {outcome?: unknown}).outcome !== undefined)
    return page.evaluate(() => (window as unknown as {outcome: Outcome<T>}).outcome)
  }

  /** Runs `script` (an async function body using window.mgr and window.summary) in the page; its value, or the error it threw. */
  function inPage<T>(script: string): Promise<Outcome<T>> {
    return page.evaluate(
      `(async () => { try { return {ok: true, value: await (async () => { ${script} })()} } catch (error) { return {ok: false, error: String(error), code: error?.error} } })()`,
    )
  }

  let signedIn: UserSummary

  it('signinRedirect leads to medpanel with PKCE S256; sign-in and Allow on its pages come back to the callback with tokens', async () => {
    // A public client: nothing secret to put in a page.
    expect(registered).not.toHaveProperty('client_secret')
    expect(registered.token_endpoint_auth_method).toBe('none')
    await page.goto(`${appOrigin}/`)
    await page.click('#login')
    await page.waitForURL((url) => url.origin === provider.server.url)
    // What the library sent: the code flow with PKCE S256 and a state, no secret anywhere.
    const authorize = new URL(page.url())
    expect(authorize.pathname).toBe('/oauth/authorize')
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: registered.client_id,
      redirect_uri: `${appOrigin}/callback`,
      response_type: 'code',
      scope: SCOPE,
      code_challenge_method: 'S256',
    })
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(authorize.searchParams.get('state')).toEqual(expect.any(String))
    // The library sends a nonce only when asked to: PKCE is its defence against code injection.
    expect(authorize.searchParams.has('nonce')).toBe(false)

    // medpanel's own sign-in form, then its consent page, in the real browser.
    await page.waitForSelector('input[name="password"]')
    await page.fill('input[name="email"]', MEMBER.email)
    await page.fill('input[name="password"]', MEMBER.password)
    await page.click('button[type="submit"]')
    await page.waitForSelector('button[name="decision"][value="allow"]')
    expect(await page.textContent('body')).toContain('Clinic SPA')
    await page.click('button[name="decision"][value="allow"]')
    await page.waitForURL((url) => url.href.startsWith(`${appOrigin}/callback?`))

    const result = await outcome<UserSummary>()
    expect(result, diagnosis()).toMatchObject({ok: true})
    signedIn = (result as {value: UserSummary}).value
    expect(signedIn.token_type.toLowerCase()).toBe('bearer')
    expect(signedIn.scope.split(' ').sort()).toEqual(['offline_access', 'openid', 'profile'])
    expect(signedIn.refresh_token).toEqual(expect.any(String))
    expect(signedIn.expired).toBe(false)
    expect(signedIn.expires_in).toBeGreaterThan(3500)
    expect(signedIn.expires_in).toBeLessThanOrEqual(3600)
    expect(signedIn.state).toBe('app-state')
    // The profile is the ID token's claims, protocol claims filtered out by the library.
    const {email: _email, email_verified: _verified, ...profile} = memberClaims(provider.sub)
    expect(signedIn.profile).toMatchObject(profile)

    // The token request went cross-origin, with the client_id and the PKCE verifier in its body and no secret.
    const token = exchanges.find((one) => one.url === `${provider.server.url}/oauth/token`)
    expect(token, diagnosis()).toBeDefined()
    const form = new URLSearchParams(token!.postData!)
    expect(Object.fromEntries(form)).toMatchObject({grant_type: 'authorization_code', client_id: registered.client_id, redirect_uri: `${appOrigin}/callback`})
    expect(form.get('code_verifier')).toEqual(expect.any(String))
    expect(form.has('client_secret')).toBe(false)
    expect(token).toMatchObject({status: 200, allowOrigin: appOrigin})
    expect(exchanges.find((one) => one.url === `${provider.server.url}/.well-known/openid-configuration`)).toMatchObject({status: 200})
  })

  it('getUser() answers the stored user, and its access token reads UserInfo from the app origin (a preflighted request)', async () => {
    const stored = await inPage<UserSummary>('return summary(await mgr.getUser())')
    // The same tokens and profile; the sign-in's state is the callback's alone (the library does not store it).
    expect(stored).toEqual({ok: true, value: {...signedIn, state: null, expires_in: expect.any(Number)}})

    const userInfo = await inPage<{endpoint: string; status: number; body: unknown}>(`
      const user = await mgr.getUser()
      const endpoint = await mgr.metadataService.getUserInfoEndpoint()
      const response = await fetch(endpoint, {headers: {Authorization: 'Bearer ' + user.access_token}})
      return {endpoint, status: response.status, body: await response.json()}
    `)
    expect(userInfo, diagnosis()).toMatchObject({ok: true})
    const {email: _email, email_verified: _verified, ...profile} = memberClaims(provider.sub)
    expect(userInfo).toEqual({ok: true, value: {endpoint: `${provider.server.url}/oauth/userinfo`, status: 200, body: profile}})
    expect(exchanges.findLast((one) => one.url === `${provider.server.url}/oauth/userinfo`)).toMatchObject({method: 'GET', status: 200, allowOrigin: appOrigin})

    // The token in a form body instead (RFC 6750 §2.2): a simple request, no preflight.
    const posted = await inPage<{status: number; body: unknown}>(`
      const user = await mgr.getUser()
      const response = await fetch(await mgr.metadataService.getUserInfoEndpoint(), {method: 'POST', body: new URLSearchParams({access_token: user.access_token})})
      return {status: response.status, body: await response.json()}
    `)
    expect(posted, diagnosis()).toEqual({ok: true, value: {status: 200, body: profile}})
    expect(exchanges.at(-1)).toMatchObject({method: 'POST', status: 200, allowOrigin: appOrigin})
  })

  it('signinSilent() uses the refresh token (no iframe): new access and refresh tokens, a new ID token for the same member', async () => {
    const before = exchanges.length
    const refreshed = await inPage<UserSummary>('return summary(await mgr.signinSilent())')
    expect(refreshed, diagnosis()).toMatchObject({ok: true})
    const after = (refreshed as {value: UserSummary}).value
    expect(after.access_token).not.toBe(signedIn.access_token)
    expect(after.refresh_token).toEqual(expect.any(String))
    expect(after.refresh_token).not.toBe(signedIn.refresh_token)
    expect(after.id_token).not.toBe(signedIn.id_token)
    expect(after.profile.sub).toBe(provider.sub)
    expect(after.expires_in).toBeGreaterThan(3500)
    // The library kept the refreshed user: getUser() answers it.
    expect(await inPage('return summary(await mgr.getUser())')).toEqual({ok: true, value: {...after, expires_in: expect.any(Number)}})

    // One token request with grant_type=refresh_token, readable by the app's origin; no authorize request, no iframe.
    const made = exchanges.slice(before)
    expect(
      made.map((one) => `${one.method} ${new URL(one.url).pathname}`),
      diagnosis(),
    ).toEqual(['POST /oauth/token'])
    expect(Object.fromEntries(new URLSearchParams(made[0]!.postData!))).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: signedIn.refresh_token,
      client_id: registered.client_id,
    })
    expect(made[0]).toMatchObject({status: 200, allowOrigin: appOrigin})
    expect(page.frames()).toHaveLength(1)

    // The spent refresh token is refused to anyone now.
    const replay = await fetch(`${provider.server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({grant_type: 'refresh_token', refresh_token: signedIn.refresh_token!, client_id: registered.client_id}),
    })
    expect(replay.status).toBe(400)
    expect(await replay.json()).toMatchObject({error: 'invalid_grant'})
    // That replay ended the family: the app's own next refresh is refused too, and the library can
    // read why (the error answer is readable cross-origin as well).
    const ended = await inPage('return summary(await mgr.signinSilent())')
    expect(ended, diagnosis()).toMatchObject({ok: false, code: 'invalid_grant'})
    expect(exchanges.at(-1)).toMatchObject({method: 'POST', url: `${provider.server.url}/oauth/token`, status: 400, allowOrigin: appOrigin})
  })

  it('a second signinRedirect while signed in at medpanel comes straight back: the member allowed these scopes before', async () => {
    await page.goto(`${appOrigin}/`)
    const documents: string[] = []
    const record = (frame: {url: () => string}) => documents.push(frame.url())
    page.on('framenavigated', record)
    await page.click('#login')
    await page.waitForURL((url) => url.href.startsWith(`${appOrigin}/callback?`) || url.origin === provider.server.url)
    page.off('framenavigated', record)
    // No medpanel page was shown: the authorize request redirected at once.
    expect(
      documents.filter((url) => url.startsWith(provider.server.url)),
      documents.join('\n'),
    ).toEqual([])
    const result = await outcome<UserSummary>()
    expect(result, diagnosis()).toMatchObject({ok: true, value: {state: 'app-state', profile: {sub: provider.sub}}})
    signedIn = (result as {value: UserSummary}).value
    expect(signedIn.refresh_token).toEqual(expect.any(String))
  })

  it('revokeTokens() revokes at /oauth/revoke from the app origin; the refresh token is refused afterwards', async () => {
    const before = exchanges.length
    const revoked = await inPage('await mgr.revokeTokens(); return summary(await mgr.getUser())')
    expect(revoked, diagnosis()).toMatchObject({ok: true, value: {refresh_token: null}})
    const made = exchanges.slice(before)
    expect(
      made.map((one) => `${one.method} ${new URL(one.url).pathname} ${new URLSearchParams(one.postData ?? '').get('token_type_hint')}`),
      diagnosis(),
    ).toEqual(['POST /oauth/revoke access_token', 'POST /oauth/revoke refresh_token'])
    for (const one of made) {
      expect(one).toMatchObject({status: 200, allowOrigin: appOrigin})
      expect(new URLSearchParams(one.postData!).get('client_id')).toBe(registered.client_id)
    }
    const refused = await fetch(`${provider.server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({grant_type: 'refresh_token', refresh_token: signedIn.refresh_token!, client_id: registered.client_id}),
    })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({error: 'invalid_grant'})
  })

  it('signoutRedirect ends the medpanel session and lands on the post-logout page with its state; the next sign-in asks for the password', async () => {
    await page.goto(`${appOrigin}/`)
    const before = navigations.length
    await page.click('#logout')
    await page.waitForURL((url) => url.href.startsWith(`${appOrigin}/signed-out?`))
    // One stop at medpanel: end_session with the ID token as hint, which needs no question to the member.
    const endSession = navigations.slice(before)
    expect(endSession.map((url) => url.pathname)).toEqual(['/oauth/end_session'])
    expect(Object.fromEntries(endSession[0]!.searchParams)).toMatchObject({
      id_token_hint: signedIn.id_token,
      post_logout_redirect_uri: `${appOrigin}/signed-out`,
    })
    expect(new URL(page.url()).searchParams.get('state')).toBe(endSession[0]!.searchParams.get('state'))
    const result = await outcome<{userState: unknown; error: unknown}>()
    expect(result, diagnosis()).toEqual({ok: true, value: {userState: 'bye-state', error: null}})
    expect(await inPage('return await mgr.getUser()')).toEqual({ok: true, value: null})

    await page.click('#login')
    await page.waitForURL((url) => url.origin === provider.server.url)
    await page.waitForSelector('input[name="password"]')
  })

  it('a page on an origin no client registered reads discovery, but the browser keeps it from the token endpoint and UserInfo', async () => {
    const stranger = await context.newPage()
    await stranger.goto(`${strangerOrigin}/`)
    const tried = await stranger.evaluate(async (issuer) => {
      const attempt = (request: Promise<Response>) =>
        request.then(
          (response) => `status ${response.status}`,
          (error: Error) => error.name,
        )
      return {
        discovery: await attempt(fetch(`${issuer}/.well-known/openid-configuration`)),
        jwks: await attempt(fetch(`${issuer}/oauth/jwks`)),
        token: await attempt(fetch(`${issuer}/oauth/token`, {method: 'POST', body: new URLSearchParams({grant_type: 'refresh_token', refresh_token: 'x', client_id: 'y'})})),
        userInfo: await attempt(fetch(`${issuer}/oauth/userinfo`, {headers: {Authorization: 'Bearer x'}})),
      }
    }, provider.server.url)
    expect(tried).toEqual({discovery: 'status 200', jwks: 'status 200', token: 'TypeError', userInfo: 'TypeError'})
    await stranger.close()

    // Why, as the browser saw it: medpanel allows the app's origin and no other.
    const preflight = (origin: string, path: string) =>
      fetch(`${provider.server.url}${path}`, {
        method: 'OPTIONS',
        headers: {origin, 'access-control-request-method': path === '/oauth/userinfo' ? 'GET' : 'POST', 'access-control-request-headers': 'authorization'},
      })
    for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/userinfo']) {
      const allowed = await preflight(appOrigin, path)
      expect(allowed.status, path).toBe(204)
      expect(allowed.headers.get('access-control-allow-origin'), path).toBe(appOrigin)
      expect((await preflight(strangerOrigin, path)).headers.get('access-control-allow-origin'), path).toBeNull()
    }
  })
})
