import {existsSync} from 'node:fs'
import {chromium, type Browser} from 'playwright-core'

/** Debian's Chromium (playwright-core never downloads a browser). */
export const CHROMIUM = '/usr/bin/chromium'

/** On CI the browser is installed by .ci/run, so browser tests must run there, never skip. */
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === 'true'

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run', '--disable-component-update', '--disable-sync']

/** Headless Chromium for a test, with any extra command-line flags. */
export function launchBrowser(extra: string[] = []): Promise<Browser> {
  return chromium.launch({executablePath: CHROMIUM, args: [...FLAGS, ...extra]})
}
