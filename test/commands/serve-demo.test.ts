import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, cliJson, tempDir} from '../helpers/cli.js'

describe('serve --demo', () => {
  it('exits 1 with one Error line, instead of lingering, when the demo cannot be seeded', () => {
    const db = join(tempDir(), 'clash.db')
    // The demo doctor's NPI is already someone else's.
    cliJson(['add-member', '--db', db, '--email', 'ana@clinic.example', '--password', 'correct horse', '--first-name', 'Ana', '--last-name', 'Ruiz', '--country', 'US', '--specialty', 'Oncology', '--npi', '1234567893'])
    const started = Date.now()
    const result = cli(['serve', '--demo', '--no-worker', '--port', '0', '--db', db])
    expect(result.status).toBe(1)
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Error: npi: .*already exists/)])
    expect(Date.now() - started).toBeLessThan(20_000)
  })
})
