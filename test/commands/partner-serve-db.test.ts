import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, startCli, tempDir} from '../helpers/cli.js'
import {basicAuth} from '../helpers/http-basic.js'

const partner = ['partner-serve', '--port', '0', '--username', 'acme', '--password', 's3cret']

// The reference partner keeps its own SQLite file on every run, PostgreSQL runs included.
describe('partner-serve and the store flags', () => {
  it('refuses --database-url in one Error line that says --db PATH is what it takes, and writes nothing', () => {
    const dir = tempDir()
    for (const flags of [
      ['--database-url', 'postgres://partner@127.0.0.1:9/partner'],
      ['--database-url=sqlite:partner.db'],
      ['--database-url', 'postgres://partner@127.0.0.1:9/partner', '--db', join(dir, 'partner.db')],
    ]) {
      const result = cli([...partner, ...flags, '--json'])
      expect(result.status, result.stderr).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(/^Error: partner-serve keeps its own SQLite file and takes no --database-url; give that file with --db PATH/)
    }
    expect(existsSync(join(dir, 'partner.db'))).toBe(false)
  })

  it('ignores MEDPANEL_DATABASE_URL (and MEDPANEL_DB) in the environment, keeping to its --db file', async () => {
    const file = join(tempDir(), 'partner.db')
    const running = await startCli([...partner, '--db', file], {MEDPANEL_DATABASE_URL: 'postgres://medpanel@127.0.0.1:9/medpanel', MEDPANEL_DB: join(tempDir(), 'service.db')})
    try {
      // A read of its store: 404 for a project nobody pushed, not a 500 from a store it never opened.
      const res = await fetch(`${running.url}/v1/projects/P-none`, {headers: {authorization: basicAuth('acme', 's3cret')}})
      expect(res.status).toBe(404)
      expect(existsSync(file)).toBe(true)
    } finally {
      expect(await running.stop()).toBe(0)
    }
  })
})
