import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {onPostgres, TEST_DATABASE_URL} from '../helpers/store.js'

/*
 * `serve --replica-url`: interface E's searches read from a hot standby of the store's database,
 * everything else from the primary. The test runs a primary of its own and a streaming standby of
 * it (scripts/postgres.sh start, standby). That the searches really go to the standby is shown by
 * pausing its replay: posts seeded on the primary meanwhile are counted by a serve without the
 * replica at once, by the one with it only once replay resumes. A URL that is not a replica of
 * the store's database is refused at start. PostgreSQL runs only.
 */
const POSTGRES_SH = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url))

function postgresSh(...args: string[]): string {
  const run = spawnSync(POSTGRES_SH, args, {encoding: 'utf8', timeout: 120_000})
  if (run.status !== 0) throw new Error(`postgres.sh ${args.join(' ')} exited ${run.status}: ${run.stderr}`)
  return run.stdout.trim()
}

const YEAR = {start: '2024-01-01T00:00:00Z', end: '2024-12-31T23:59:59Z'}
const LATER = {start: '2025-01-01T00:00:00Z', end: '2025-12-31T23:59:59Z'}

describe.skipIf(!onPostgres)('conversation searches on a read replica', () => {
  const primaryDir = tempDir('medpanel-pg-primary-')
  const standbyDir = tempDir('medpanel-pg-standby-')
  let primaryUrl: string
  let standbyUrl: string
  let store: string[]
  let viaReplica: RunningCli
  let viaPrimary: RunningCli
  let primary: pg.Client
  let standby: pg.Client
  let key: string
  let token: string

  const search = async (server: RunningCli, method: 'summary' | 'data', window: {start: string; end: string}) => {
    const params = new URLSearchParams(window)
    params.append('terms[]', 'a')
    const res = await fetch(`${server.url}/conversations/${method}?${params}`, {headers: {accept: 'application/vnd.service-v1+json', 'x-service-conversation-api-key': key}})
    return {status: res.status, body: (await res.json()) as {summary: {uniques: {posts: number; comments: number}}; conversations?: unknown[]; message?: string}}
  }
  const posts = async (server: RunningCli, window: {start: string; end: string}) => {
    const {status, body} = await search(server, 'summary', window)
    expect(status, JSON.stringify(body)).toBe(200)
    return body.summary.uniques.posts
  }
  /** Until the standby has replayed everything the primary had written when this was called. */
  const caughtUp = async () => {
    const {rows} = await primary.query('select pg_current_wal_lsn()::text as lsn')
    const started = performance.now()
    for (;;) {
      const replayed = await standby.query('select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [rows[0].lsn])
      if (replayed.rows[0].done) return
      if (performance.now() - started > 30_000) throw new Error('the standby did not catch up')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  beforeAll(async () => {
    primaryUrl = postgresSh('start', primaryDir, 'free')
    standbyUrl = postgresSh('standby', standbyDir, 'free', new URL(primaryUrl).port)
    store = ['--database-url', primaryUrl]
    const client = cliJson<{client_id: string}>([
      'register-client',
      ...store,
      '--name',
      'Replica Co',
      '--url',
      'https://replica.example',
      '--logo-url',
      'https://replica.example/logo.png',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--grant',
      'signon,conversations',
    ])
    key = cliJson<{api_key: string}>(['issue-api-key', client.client_id, ...store, '--methods', 'summary,data']).api_key
    cliJson([
      'add-member',
      ...store,
      '--email',
      'replica.doctor@clinic.example',
      '--password',
      'a long enough password',
      '--first-name',
      'Ro',
      '--last-name',
      'Ward',
      '--country',
      'US',
      '--specialty',
      'Oncology',
    ])
    token = cliJson<{access_token: string}>(['issue-token', ...store, '--member', '1', '--client', client.client_id]).access_token
    cliJson(['seed-posts', ...store, '--count', '200', '--comments', '2', '--from', YEAR.start, '--to', YEAR.end, '--seed', '5'])
    primary = new pg.Client({connectionString: primaryUrl})
    standby = new pg.Client({connectionString: standbyUrl})
    // The standby is stopped by the last test under this connection.
    standby.on('error', () => undefined)
    await Promise.all([primary.connect(), standby.connect()])
    await caughtUp()
    ;[viaReplica, viaPrimary] = await Promise.all([startCli(['serve', ...store, '--replica-url', standbyUrl, '--port', '0']), startCli(['serve', ...store, '--port', '0'])])
  })

  afterAll(async () => {
    await Promise.all([viaReplica, viaPrimary].map((server) => server?.stop('SIGTERM')))
    await Promise.all([primary, standby].map((client) => client?.end().catch(() => undefined)))
    postgresSh('stop', standbyDir)
    postgresSh('stop', primaryDir)
  })

  it('answers summaries and data calls from the replica with the primary’s counts', async () => {
    expect(viaReplica.stderr()).toMatch(/searches read from the replica postgres:\/\/medpanel@127\.0\.0\.1:\d+\/medpanel/)
    const counted = await posts(viaPrimary, YEAR)
    expect(counted).toBeGreaterThan(0)
    expect(await posts(viaReplica, YEAR)).toBe(counted)
    const [fromReplica, fromPrimary] = await Promise.all([search(viaReplica, 'data', YEAR), search(viaPrimary, 'data', YEAR)])
    expect([fromReplica.status, fromPrimary.status]).toEqual([200, 200])
    expect(fromReplica.body.conversations?.length).toBeGreaterThanOrEqual(counted)
    expect(fromReplica.body.conversations).toEqual(fromPrimary.body.conversations)
  })

  it('reads searches from the standby: what it has not replayed yet is not counted, while the primary serves the rest', async () => {
    await standby.query('select pg_wal_replay_pause()')
    try {
      cliJson(['seed-posts', ...store, '--count', '30', '--comments', '1', '--from', LATER.start, '--to', LATER.end, '--seed', '6'])
      const written = await posts(viaPrimary, LATER)
      expect(written).toBeGreaterThan(0)
      // Not yet on the standby...
      expect(await posts(viaReplica, LATER)).toBe(0)
      // ...while sign-on, on the primary, answers as ever.
      const info = await fetch(`${viaReplica.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})
      expect(info.status).toBe(200)
      await standby.query('select pg_wal_replay_resume()')
      await caughtUp()
      // Once replayed, counted. A CI run on a loaded machine once still saw 0 straight after the
      // standby reported the primary's position replayed (cause not found): ask again for a few
      // seconds, and fail if the posts never arrive.
      let seen = await posts(viaReplica, LATER)
      for (const until = performance.now() + 10_000; seen !== written && performance.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        seen = await posts(viaReplica, LATER)
      }
      expect(seen).toBe(written)
    } finally {
      await standby.query('select pg_wal_replay_resume()').catch(() => undefined)
    }
  })

  it('refuses, at start, a URL that is no replica of the store’s database', () => {
    // The suite's own cluster: another cluster altogether.
    const other = cli(['serve', ...store, '--replica-url', TEST_DATABASE_URL!, '--port', '0'])
    expect(other.status).toBe(1)
    expect(other.stderr).toMatch(/^Error: the replica URL postgres:\/\/\S+ reaches database "\w+" of cluster \d+, not a replica of the store's database "medpanel" of cluster \d+/)
    expect(other.stderr.trim().split('\n')).toHaveLength(1)
    // Another database of the store's own cluster.
    const sibling = new URL(primaryUrl)
    sibling.pathname = '/postgres'
    const elsewhere = cli(['serve', ...store, '--replica-url', sibling.href, '--port', '0'])
    expect(elsewhere.status).toBe(1)
    expect(elsewhere.stderr).toMatch(/reaches database "postgres" of cluster \d+, not a replica of the store's database "medpanel"/)
    const notPostgres = cli(['serve', ...store, '--replica-url', 'mysql://somewhere/db', '--port', '0'])
    expect([notPostgres.status, notPostgres.stderr]).toEqual([1, 'Error: --replica-url (or MEDPANEL_REPLICA_URL) must be a postgres:// URL\n'])
  })

  it('a stopped replica makes searches 503 in interface E’s shape, and nothing else', async () => {
    postgresSh('stop', standbyDir)
    const {status, body} = await search(viaReplica, 'summary', YEAR)
    expect(status).toBe(503)
    expect(body).toMatchObject({code: 503, message: 'service temporarily unavailable'})
    const info = await fetch(`${viaReplica.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})
    expect(info.status).toBe(200)
  })
})

// On SQLite (the PostgreSQL run turns --db into a database of its own, so this runs on SQLite only).
describe.skipIf(onPostgres)('serve --replica-url with a SQLite store', () => {
  it('is refused with one Error line before anything starts', () => {
    const refused = cli(['serve', '--db', `${tempDir('medpanel-replica-sqlite-')}/store.db`, '--replica-url', 'postgres://127.0.0.1:1/medpanel', '--port', '0'])
    expect([refused.status, refused.stderr, refused.stdout]).toEqual([
      1,
      'Error: --replica-url (or MEDPANEL_REPLICA_URL) applies to a PostgreSQL store: give --database-url postgres://… too\n',
      '',
    ])
  })
})
