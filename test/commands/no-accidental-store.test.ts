import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, startCli, tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'

// A SQLite store is made only on purpose: a command that reads refuses a store that is not there,
// naming the path and where it came from; a command that writes makes one only when it succeeds,
// and says so; serve makes one for a new deployment, and says so. These are SQLite files; a
// PostgreSQL database is made by its administrator, so the run on PostgreSQL skips them.

const NO_URL = {MEDPANEL_DATABASE_URL: ''}
const env = (extra: Record<string, string> = {}) => ({...NO_URL, ...extra})
const registration = ['--name', 'Acme', '--url', 'https://acme.example.com', '--logo-url', 'https://acme.example.com/logo.png', '--grant', 'balance']

describe.skipIf(onPostgres)('a store is never made by accident', () => {
  it('a reading command refuses a missing store, naming it and where it came from, and creates nothing', () => {
    const dir = tempDir()
    const typo = join(dir, 'medpanl.db')
    for (const command of [['list-clients'], ['list-members'], ['show-balance', 'user_id', '1'], ['list-signing-keys'], ['status'], ['backup', '--to', join(dir, 'b.db')]]) {
      const run = cli([...command, '--db', typo], env())
      expect(run.status, `${command.join(' ')}: ${run.stderr}`).toBe(1)
      expect(run.stdout).toBe('')
      expect(run.stderr).toBe(`Error: there is no store at ${typo} (given with --db); nothing was created\n`)
    }
    const fromEnv = cli(['list-clients'], env({MEDPANEL_DB: typo}))
    expect(fromEnv.stderr).toBe(`Error: there is no store at ${typo} (from MEDPANEL_DB); nothing was created\n`)
    expect(readdirSync(dir)).toEqual([])
  })

  it('a writing command makes no store when it fails, and says so when it makes one', () => {
    const dir = tempDir()
    const file = join(dir, 'medpanel.db')
    // Invalid input, and a refusal by the rules on an empty store: both leave the directory empty.
    const invalid = cli(['register-client', '--db', file, ...registration.slice(0, 2), '--url', 'notaurl', ...registration.slice(4)], env())
    expect(invalid.status).toBe(1)
    expect(invalid.stderr).toMatch(/^Error: url: /)
    const refused = cli(['withdraw', 'user_id', '2', '--type', 'PAYPAL', '--amount', '5'], env({MEDPANEL_DB: file}))
    expect([refused.status, refused.stderr]).toEqual([1, 'Error: no account for user_id 2\n'])
    expect(readdirSync(dir)).toEqual([])

    const made = cli(['register-client', '--db', file, ...registration, '--json'], env())
    expect(made.status, made.stderr).toBe(0)
    expect(made.stderr).toBe(`created a new store at ${file}\n`)
    expect(JSON.parse(made.stdout)).toMatchObject({name: 'Acme'})
    expect(readdirSync(dir).sort()).toEqual(['medpanel.db', 'medpanel.db.key'])
    // Only the first time: the store is there now.
    const again = cli(['register-client', '--db', file, ...registration, '--json'], env())
    expect([again.status, again.stderr]).toEqual([0, ''])
    const listed = cli(['list-clients', '--db', file, '--json'], env())
    expect(JSON.parse(listed.stdout)).toHaveLength(2)
  })

  it('serve makes the store of a new deployment and says so', async () => {
    const dir = tempDir()
    const file = join(dir, 'new.db')
    const server = await startCli(['serve', '--port', '0', '--no-worker', '--db', file], env())
    try {
      expect(server.stderr()).toContain(`created a new store at ${file}\n`)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      await server.stop()
    }
    expect(readdirSync(dir)).toContain('new.db')
  })
})
