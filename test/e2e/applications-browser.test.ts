import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {browserAvailable, launchBrowser} from '../helpers/browser.js'
import {cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'

describe.skipIf(!browserAvailable)('sign-on in Chromium at a plain-http origin that is not loopback', () => {
  let server: RunningCli
  let browser: Browser
  let origin: string
  let client: {client_id: string; client_secret: string}
  let logoUrl: string
  const REDIRECT = 'https://partner.example/callback'

  beforeAll(async () => {
    // First find a free port, then serve under a .test name mapped to 127.0.0.1: that origin is
    // not a secure context, so Chromium sends no Sec-Fetch-Site and only the Origin header.
    const probe = await startCli(['serve', '--no-worker', '--port', '0', '--db', join(tempDir(), 'probe.db')])
    const port = new URL(probe.url).port
    await probe.stop()
    origin = `http://medpanel.test:${port}`
    // A logo address that answers 404 (on this origin, which the pages' policy lets images load from).
    logoUrl = `${origin}/logo-that-is-gone.png`
    const db = ['--db', join(tempDir(), 'apps.db')]
    client = cliJson([
      'register-client',
      ...db,
      '--name',
      'Partner Research',
      '--url',
      'https://partner.example',
      '--logo-url',
      logoUrl,
      '--redirect-uri',
      REDIRECT,
      '--token-ttl',
      '3600',
    ])
    cliJson([
      'add-member',
      ...db,
      '--email',
      'dr.lee@clinic.example',
      '--password',
      'browser password 1',
      '--first-name',
      'Min',
      '--last-name',
      'Lee',
      '--country',
      'US',
      '--specialty',
      'Cardiology',
    ])
    server = await startCli(['serve', '--no-worker', '--port', port, '--base-url', origin, ...db])
    browser = await launchBrowser(['--host-resolver-rules=MAP medpanel.test 127.0.0.1'])
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  /** The client's logo box, and every <img> on the page that failed to load (a broken-image icon). */
  async function logo(page: Page) {
    const box = await page.$eval('.logo', (element) => {
      const rect = element.getBoundingClientRect()
      return {width: rect.width, height: rect.height, background: getComputedStyle(element).backgroundImage}
    })
    const broken = await page.evaluate(() => [...document.images].filter((image) => image.complete && image.naturalWidth === 0).map((image) => image.src))
    return {...box, broken, images: await page.evaluate(() => document.images.length)}
  }

  it('signs in and allows on the consent page, then lists, revokes and signs out on the applications page', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const authorize = `${origin}/oauth/authorize?${new URLSearchParams({client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'apps'})}`
    await page.goto(authorize)
    const signIn = async () => {
      await page.fill('input[name="email"]', 'dr.lee@clinic.example')
      await page.fill('input[name="password"]', 'browser password 1')
      const logoAnswer = page.waitForResponse((response) => response.url() === logoUrl)
      await page.click('button[type="submit"]')
      await page.waitForSelector('button[name="decision"][value="allow"]')
      return logoAnswer
    }
    // The consent page names medpanel, and the logo that is gone leaves an empty box, no broken image.
    expect((await signIn()).status()).toBe(404)
    expect(await page.textContent('.service')).toBe('medpanel · sign in with your medpanel membership')
    expect(await logo(page)).toEqual({width: 48, height: 48, background: `url("${logoUrl}")`, broken: [], images: 0})
    expect(await page.getAttribute('a:has-text("withdraw this access at any time")', 'href')).toBe('/oauth/authorized_applications')

    // Not you? Sign out: back at the sign-in form of this same request, then in again.
    await page.click('button:has-text("Sign out")')
    await page.waitForSelector('input[name="password"]')
    expect(await page.textContent('h1')).toBe('Sign in to continue to Partner Research')
    expect(page.url()).toBe(authorize)
    await signIn()
    // The partner's site is not reachable from here: the request the browser makes to it is enough.
    const toPartner = page.waitForRequest((request) => request.url().startsWith(REDIRECT))
    await page.click('button[name="decision"][value="allow"]')
    const landed = new URL((await toPartner).url())
    expect(landed.searchParams.get('iss')).toBe(origin)
    expect(landed.searchParams.get('state')).toBe('apps')
    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
        client_secret: client.client_secret,
      }),
    })
    const {access_token: accessToken} = (await token.json()) as {access_token: string}
    expect((await fetch(`${server.url}/user/oauth/token/info`, {headers: {authorization: `Bearer ${accessToken}`}})).status).toBe(200)

    // Still signed in from the consent page (same browser context): the list shows the client.
    await page.waitForURL((url) => url.protocol === 'chrome-error:').catch(() => undefined)
    await page.goto(`${origin}/oauth/authorized_applications`)
    expect(await page.textContent('h1')).toBe('Applications you allowed')
    expect(await page.textContent('body')).toContain('Partner Research')
    expect(await logo(page)).toEqual({width: 48, height: 48, background: `url("${logoUrl}")`, broken: [], images: 0})
    // Revoke asks first; Cancel goes back to the list with nothing taken back.
    await page.click('button:has-text("Revoke access for Partner Research")')
    await page.waitForSelector('button:has-text("Confirm")')
    expect(await page.textContent('h1')).toBe('Take access back from Partner Research?')
    expect(await page.textContent('body')).toContain('Its tokens stop working at once')
    await page.click('a:has-text("Cancel")')
    await page.waitForURL((url) => url.pathname === '/oauth/authorized_applications')
    expect((await fetch(`${server.url}/user/oauth/token/info`, {headers: {authorization: `Bearer ${accessToken}`}})).status).toBe(200)
    await page.click('button:has-text("Revoke access for Partner Research")')
    await page.waitForSelector('button:has-text("Confirm")')
    await page.click('button:has-text("Confirm")')
    await page.waitForURL((url) => url.pathname === '/oauth/authorized_applications')
    expect(await page.textContent('body')).not.toContain('Revoke access for Partner Research')
    expect((await fetch(`${server.url}/user/oauth/token/info`, {headers: {authorization: `Bearer ${accessToken}`}})).status).toBe(401)

    await page.click('button:has-text("Sign out")')
    await page.waitForSelector('input[name="password"]')
    expect(await page.textContent('h1')).toBe('Sign in to see the applications you allowed')
    await context.close()
  })
})
