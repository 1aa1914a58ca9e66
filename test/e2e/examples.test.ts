import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {medpanelOnPath, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'

const examples = fileURLToPath(new URL('../../examples/', import.meta.url))

// The scenarios in examples/ run as a tester would run them, against `serve --demo`, in order.
// (Their store is a SQLite file they share with serve through MEDPANEL_DB.)
describe.skipIf(onPostgres)('examples/ against serve --demo', () => {
  const dir = tempDir('medpanel-examples-')
  const db = join(dir, 'demo.db')
  // The scripts call "$MEDPANEL …": `medpanel` as this run starts the CLI (bin/medpanel on Node).
  const medpanel = join(medpanelOnPath(dir), 'medpanel')
  let server: RunningCli
  beforeAll(async () => {
    server = await startCli(['serve', '--demo', '--port', '0', '--db', db])
  })
  afterAll(() => server?.stop())

  const runs = (script: string) => {
    const run = spawnSync('bash', [join(examples, script)], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {...process.env, MEDPANEL_URL: server.url, MEDPANEL: medpanel, MEDPANEL_DB: db, PARTNER_PORT: String(20_000 + (process.pid % 10_000))},
    })
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toMatch(/^ok: /m)
    expect(run.stdout).not.toMatch(/FAILED/)
  }

  it.each(['signon.sh', 'withdrawal.sh', 'conversations-xml.sh', 'partner-lifecycle.sh'])('%s exits 0', runs)

  it('signon.sh runs again: the demo doctor allowed the demo client, so the code comes back without the page', () => runs('signon.sh'))
})
