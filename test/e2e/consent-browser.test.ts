import {join} from 'node:path'
import type {Browser} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {browserAvailable, launchBrowser} from '../helpers/browser.js'
import {startCli, tempDir, type RunningCli} from '../helpers/cli.js'

describe.skipIf(!browserAvailable)('the consent page in a real browser (Debian Chromium)', () => {
  let server: RunningCli
  let browser: Browser
  beforeAll(async () => {
    server = await startCli(['serve', '--demo', '--port', '0', '--db', join(tempDir(), 'browser.db')])
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it('signs in, allows, and lands on the redirect URI with code and state', async () => {
    const info = (await (await fetch(`${server.url}/healthz`)).json()) as {status: string}
    expect(info.status).toBe('ok')
    const page = await browser.newPage()
    const redirect = `${server.url}/demo/callback`
    const authorize = `${server.url}/oauth/authorize?${new URLSearchParams({client_id: 'demo-client', redirect_uri: redirect, response_type: 'code', state: 'browser-state'})}`
    await page.goto(authorize)
    await page.fill('input[name="email"]', 'demo.doctor@medpanel.test')
    await page.fill('input[name="password"]', 'demo-password')
    await page.click('button[type="submit"]')
    await page.waitForSelector('button[name="decision"][value="allow"]')
    expect(await page.textContent('h1')).toContain('Demo Research Partner')
    await page.click('button[name="decision"][value="allow"]')
    await page.waitForURL((url) => url.pathname === '/demo/callback')
    const landed = new URL(page.url())
    expect(`${landed.origin}${landed.pathname}`).toBe(redirect)
    expect(landed.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(landed.searchParams.get('state')).toBe('browser-state')

    const token = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        redirect_uri: redirect,
        client_id: 'demo-client',
        client_secret: 'demo-client-secret',
      }),
    })
    expect(token.status).toBe(200)
  })

  it('deny lands on the redirect URI with error=access_denied', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const redirect = `${server.url}/demo/callback`
    // The member allowed the profile above; a scope not allowed yet brings the consent page back.
    await page.goto(
      `${server.url}/oauth/authorize?${new URLSearchParams({client_id: 'demo-client', redirect_uri: redirect, response_type: 'code', state: 's2', scope: 'profile email'})}`,
    )
    await page.fill('input[name="email"]', 'demo.doctor@medpanel.test')
    await page.fill('input[name="password"]', 'demo-password')
    await page.click('button[type="submit"]')
    await page.click('button[name="decision"][value="deny"]')
    await page.waitForURL((url) => url.pathname === '/demo/callback')
    const landed = new URL(page.url())
    expect(landed.searchParams.get('error')).toBe('access_denied')
    expect(landed.searchParams.get('state')).toBe('s2')
    await context.close()
  })
})
