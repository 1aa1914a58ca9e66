import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {freshApp} from '../helpers/app.js'
import {tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The warnings left are decisions, not gaps: the consent page's form posts answer with redirects
 * (302/303) or a page re-rendered with its error, never a 2xx; the metadata document and the
 * applications page have no client error to document.
 */
const ACCEPTED_WARNINGS = ['operation-2xx-response', 'operation-4xx-response', 'info-license-strict']

// The document is the same on every runtime and store: linted once, on Node with better-sqlite3.
describe.skipIf(onPostgres || process.env.MEDPANEL_SQLITE_DRIVER === 'node:sqlite')('/openapi.json under redocly lint (recommended rules)', () => {
  it('has no errors, and no warnings but the accepted ones', async () => {
    const ctx = await freshApp()
    try {
      const file = join(tempDir('medpanel-openapi-'), 'openapi.json')
      writeFileSync(file, await (await ctx.app.request('/openapi.json')).text())
      const run = spawnSync(process.execPath, [join(root, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', '--extends=recommended', '--format=json', file], {
        encoding: 'utf8',
        timeout: 120_000,
      })
      const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {problems: {ruleId: string; severity: string; message: string}[]}
      const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`)
      expect(errors).toEqual([])
      const warnings = report.problems.filter((p) => p.severity === 'warn' && !ACCEPTED_WARNINGS.includes(p.ruleId)).map((p) => `${p.ruleId}: ${p.message}`)
      expect(warnings).toEqual([])
      expect(run.status).toBe(0)
    } finally {
      await ctx.store.close()
    }
  })
})
