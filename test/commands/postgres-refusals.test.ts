import {describe, expect, it} from 'vitest'
import {cli, cliJson, startCli} from '../helpers/cli.js'
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'

/*
 * What commands refuse on PostgreSQL, each in one line. A PostgreSQL store keeps its sealing keys
 * in MEDPANEL_SECRET_KEY only: a `serve` started without it could not sign anyone in (the consent
 * page, sign-in and the key set need the keys), so it must not start at all, let alone answer
 * /healthz with 200. backup and restore are for SQLite store files.
 */
describe.skipIf(!onPostgres)('serve on PostgreSQL without MEDPANEL_SECRET_KEY', () => {
  it('refuses to start, with the one line the other commands print, and serves nothing', async () => {
    const url = await freshDatabaseUrl()
    // Migrated, with a client, by a process that has the key (the test run exports one).
    cliJson(['list-clients', '--database-url', url])
    const refused = cli(['serve', '--database-url', url, '--port', '0', '--no-worker'], {MEDPANEL_SECRET_KEY: ''})
    expect(refused.status).toBe(1)
    expect(refused.stderr.trim().split('\n')).toHaveLength(1)
    expect(refused.stderr).toMatch(/^Error: a PostgreSQL store needs MEDPANEL_SECRET_KEY/)
    // With the key it starts as before.
    const server = await startCli(['serve', '--database-url', url, '--port', '0', '--no-worker'])
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  })
})

describe.skipIf(!onPostgres)('backup and restore on PostgreSQL', () => {
  it('refuse in one line, naming what to use instead, and change nothing', async () => {
    const url = await freshDatabaseUrl()
    cliJson(['list-clients', '--database-url', url])
    const backup = cli(['backup', '--database-url', url, '--to', '/nonexistent/never-written.db'])
    expect(backup.status).toBe(1)
    expect(backup.stderr.trim().split('\n')).toHaveLength(1)
    expect(backup.stderr).toMatch(/^Error: backup copies a SQLite store file; back up a PostgreSQL store with pg_dump/)
    const restore = cli(['restore', '--database-url', url, '--from', '/nonexistent/backup.db'])
    expect(restore.status).toBe(1)
    expect(restore.stderr.trim().split('\n')).toHaveLength(1)
    expect(restore.stderr).toMatch(/^Error: restore puts a backup in place of a SQLite store file.*pg_restore/)
  })
})
