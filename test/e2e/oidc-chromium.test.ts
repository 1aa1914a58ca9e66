import * as client from 'openid-client'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {browserAvailable, launchBrowser} from '../helpers/browser.js'
import {discover, MEMBER, startProvider, type Provider, type RelyingParty} from '../helpers/oidc.js'

/**
 * A relying party web application on its own origin, built on openid-client, and a member in
 * Debian's Chromium: sign in through medpanel's real pages, come back signed in, then log out
 * (RP-initiated logout) with and without an id_token_hint. The browser follows every redirect
 * and applies every page's Content-Security-Policy, so this shows the flows work in a browser,
 * not only in fetch.
 */
describe.skipIf(!browserAvailable)('OpenID Connect in Chromium, with a relying party on another origin', () => {
  let provider: Provider
  let rpServer: Server
  let rpOrigin: string
  let rp: RelyingParty
  let config: client.Configuration
  let browser: Browser
  /** The relying party's memory: the pending sign-in by state, and the signed-in member's ID token. */
  const pending = new Map<string, {verifier: string; nonce: string}>()
  let idToken: string | undefined

  /** The relying party: /login starts the flow, /callback finishes it, /logout and /logout?hint=1 leave, /rp/…/signed-out is where medpanel sends the member back. */
  async function relyingParty(path: string, url: URL): Promise<{status: number; body?: string; location?: string}> {
    if (path === '/login') {
      const verifier = client.randomPKCECodeVerifier()
      const nonce = client.randomNonce()
      const state = client.randomState()
      pending.set(state, {verifier, nonce})
      const to = client.buildAuthorizationUrl(config, {
        redirect_uri: rp.redirectUri,
        scope: 'openid profile email',
        nonce,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
      return {status: 302, location: to.href}
    }
    if (url.href.startsWith(rp.redirectUri)) {
      const state = url.searchParams.get('state') ?? ''
      const flow = pending.get(state)
      if (!flow) return {status: 400, body: 'unknown state'}
      pending.delete(state)
      const tokens = await client.authorizationCodeGrant(config, url, {pkceCodeVerifier: flow.verifier, expectedNonce: flow.nonce, expectedState: state})
      const claims = tokens.claims()!
      const me = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
      idToken = tokens.id_token
      return {status: 200, body: `<h1 id="who">${me.name} (${claims.sub}, ${me.email})</h1>`}
    }
    if (path === '/logout') {
      const hint: Record<string, string> = url.searchParams.get('hint') === '1' && idToken !== undefined ? {id_token_hint: idToken} : {}
      idToken = undefined
      return {status: 302, location: client.buildEndSessionUrl(config, {...hint, post_logout_redirect_uri: rp.postLogoutRedirectUri, state: 'rp-state'}).href}
    }
    if (url.href.startsWith(rp.postLogoutRedirectUri)) return {status: 200, body: `<h1 id="bye">Signed out (${url.searchParams.get('state')})</h1>`}
    return {status: 404, body: 'not found'}
  }

  beforeAll(async () => {
    provider = await startProvider()
    rpServer = createServer((req, res) => {
      const url = new URL(req.url!, rpOrigin)
      relyingParty(url.pathname, url).then(
        ({status, body, location}) => res.writeHead(status, {'content-type': 'text/html; charset=utf-8', ...(location ? {location} : {})}).end(body ?? ''),
        (error: Error) => res.writeHead(500, {'content-type': 'text/plain'}).end(`${error.message}\n${JSON.stringify((error as {cause?: unknown}).cause)}`),
      )
    })
    await new Promise<void>((resolve) => rpServer.listen(0, '127.0.0.1', resolve))
    // Another port is another origin: medpanel's pages must send the browser there.
    rpOrigin = `http://127.0.0.1:${(rpServer.address() as AddressInfo).port}`
    rp = provider.register('Browser RP', 'ES256', rpOrigin)
    config = await discover(provider, rp)
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => rpServer?.close(resolve))
    await provider?.server.stop()
  })

  /**
   * Signs in on medpanel's page (if it shows) and allows (unless the member allowed this client
   * before: remembered consent goes straight back); ends on the relying party's callback page.
   */
  async function signIn(page: Page) {
    const ALLOW = 'button[name="decision"][value="allow"]'
    await page.goto(`${rpOrigin}/login`)
    await page.waitForSelector(`input[name="password"], ${ALLOW}, #who`)
    if (await page.$('input[name="password"]')) {
      expect(new URL(page.url()).origin).toBe(provider.server.url)
      await page.fill('input[name="email"]', MEMBER.email)
      await page.fill('input[name="password"]', MEMBER.password)
      await page.click('button[type="submit"]')
      await page.waitForSelector(`${ALLOW}, #who`)
    }
    if (await page.$(ALLOW)) await page.click(ALLOW)
    await page.waitForSelector('#who')
    expect(page.url().startsWith(rp.redirectUri)).toBe(true)
    expect(await page.textContent('#who')).toBe(`${MEMBER.first_name} ${MEMBER.last_name} (${provider.sub}, ${MEMBER.email})`)
  }

  /** Whether medpanel asks for the password when the relying party starts a new sign-in. */
  async function asksForPassword(page: Page) {
    await page.goto(`${rpOrigin}/login`)
    await page.waitForSelector('input[name="password"], button[name="decision"][value="allow"], #who')
    return (await page.$('input[name="password"]')) !== null
  }

  it('signs in through the consent page; logout with the ID token as hint lands on the post-logout URI with state, signed out', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await signIn(page)
    expect(await asksForPassword(page)).toBe(false)

    await page.goto(`${rpOrigin}/logout?hint=1`)
    await page.waitForSelector('#bye')
    expect(page.url()).toBe(`${rp.postLogoutRedirectUri}?state=rp-state`)
    expect(await page.textContent('#bye')).toBe('Signed out (rp-state)')
    expect(await asksForPassword(page)).toBe(true)
    await context.close()
  })

  it('logout without a hint: the member confirms on medpanel, and the form leads back to the relying party', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const blocked: string[] = []
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text())
    })
    await signIn(page)

    await page.goto(`${rpOrigin}/logout`)
    await page.waitForSelector('text=Sign out of medpanel?')
    expect(new URL(page.url()).origin).toBe(provider.server.url)
    expect(await page.textContent('main')).toContain('Browser RP')
    await page.click('button[type="submit"]')
    await page.waitForURL((url) => url.href.startsWith(rp.postLogoutRedirectUri), {timeout: 10_000})
    expect(await page.textContent('#bye')).toBe('Signed out (rp-state)')
    expect(blocked).toEqual([])
    expect(await asksForPassword(page)).toBe(true)
    await context.close()
  })
})
