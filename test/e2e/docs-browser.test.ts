import {join} from 'node:path'
import type {Browser} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {browserAvailable, launchBrowser} from '../helpers/browser.js'
import {startCli, tempDir, type RunningCli} from '../helpers/cli.js'

describe.skipIf(!browserAvailable)('the API reference at /docs in a real browser (Debian Chromium)', () => {
  let server: RunningCli
  let browser: Browser
  beforeAll(async () => {
    server = await startCli(['serve', '--demo', '--port', '0', '--db', join(tempDir(), 'docs.db')])
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it('renders every operation of /openapi.json from files served by medpanel alone, with no errors', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {paths: Record<string, Record<string, unknown>>}
    const page = await browser.newPage()
    const problems: string[] = []
    page.on('pageerror', (error) => problems.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text())
    })
    // Offline: any request that leaves medpanel's origin fails the test.
    const origin = new URL(server.url).origin
    const foreign: string[] = []
    await page.route('**/*', (route) => {
      const url = route.request().url()
      if (url.startsWith(origin) || url.startsWith('data:')) return route.continue()
      foreign.push(url)
      return route.abort()
    })
    await page.goto(`${server.url}/docs`)
    await page.waitForSelector('.opblock-summary-path', {timeout: 30_000})
    const shown = await page.$$eval('.opblock-summary-path', (nodes) => nodes.map((node) => node.getAttribute('data-path') ?? node.textContent?.trim() ?? ''))
    const documented = Object.keys(doc.paths)
    expect(documented.length).toBeGreaterThan(20)
    for (const path of documented) expect(shown, path).toContain(path)
    expect(foreign).toEqual([])
    expect(problems).toEqual([])
  })
})
