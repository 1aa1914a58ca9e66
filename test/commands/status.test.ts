import {spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, describe, expect, it} from 'vitest'
import {SERVICE_SCHEMA} from '../../src/schema.js'
import {cli, cliArgv, cliJson, partnerRegistration, startCli, tempDir} from '../helpers/cli.js'
import {emptyStore, makeStoreFile, onPostgres, storeFlags} from '../helpers/store.js'
import {specialtyQuotaFile} from '../helpers/partner-input.js'

// `medpanel status`: one read-only look at a store. It never migrates or creates anything, so it
// reports on a store from an older release as it is, beside a running serve, and on a store this
// user may not write.

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))
const ALL = Object.keys(SERVICE_SCHEMA.migrations).sort()
const LATEST = ALL.at(-1)!

interface Status {
  medpanel_version: string
  store: {kind: string; location: string; size_bytes: number; file_bytes?: number; wal_bytes?: number}
  schema: {version: string; latest: string; pending: string[]; unknown: string[]}
  clients: number | null
  members: number | null
  balance: {accounts: number; totals: {currency: string; available_funds: number}[]} | null
  outbox: {
    partners: {client_id: string; name: string | null; pending: number; failed: number; oldest_pending_at: string | null; oldest_pending_age_seconds: number | null}[]
    pending: number
    failed_deliveries: number
  } | null
  api_keys: {
    active: number
    near_allowance_percent: number
    near_allowance: {id: string; client_id: string; data_calls_used: number; data_call_allowance: number; used_percent: number}[]
  } | null
}

const status = (db: string[], env: Record<string, string> = {}) => cliJson<Status>(['status', ...db], env)

/** The files of a directory with their sizes and modification times, to show nothing changed. */
function listing(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const info = statSync(join(dir, name))
      return `${name} ${info.size} ${info.mtimeMs}`
    })
}

// Many CLI runs each (slow under Deno): no time limit, as the scenarios are bounded by themselves.
describe('medpanel status', {timeout: 0}, () => {
  it('on a fresh store: up to date, everything at zero, the size; as a table without --json', async () => {
    const file = join(tempDir(), 'fresh.db')
    const db = ['--db', file]
    await makeStoreFile(file)
    const fresh = status(db)
    expect(fresh.schema).toEqual({version: LATEST, latest: LATEST, pending: [], unknown: []})
    expect(fresh).toMatchObject({clients: 0, members: 0, balance: {accounts: 0, totals: []}, outbox: {partners: [], pending: 0, failed_deliveries: 0}})
    expect(fresh.api_keys).toEqual({active: 0, near_allowance_percent: 80, near_allowance: []})
    expect(fresh.store.kind).toBe(onPostgres ? 'postgres' : 'sqlite')
    expect(fresh.store.size_bytes).toBeGreaterThan(0)
    if (!onPostgres) expect(fresh.store.size_bytes).toBe(fresh.store.file_bytes! + fresh.store.wal_bytes!)
    const text = cli(['status', ...db])
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout).toMatch(new RegExp(`^schema +${LATEST} \\(up to date\\)$`, 'm'))
    expect(text.stdout).toMatch(/^members +0$/m)
    expect(text.stdout).toContain('No API key has used 80% or more of its data-call allowance.')
  })

  describe('after a scenario', () => {
    // The scenario, built once at fixed times (MEDPANEL_NOW); the tests read it at 2026-01-05T01:00:00Z.
    const dir = tempDir()
    const db = ['--db', join(dir, 'scenario.db')]
    const at = (time: string) => ({MEDPANEL_NOW: time})
    const t0 = at('2026-01-01T00:00:00Z')
    const readAt = at('2026-01-05T01:00:00Z')
    let partner: {client_id: string}
    let research: {client_id: string}
    let exhausted: {id: string}

    beforeAll(() => {
      // A partner nobody listens for (port 9): its pushes wait in the outbox.
      partner = cliJson<{client_id: string}>([...partnerRegistration(db, 'http://127.0.0.1:9'), '--partner-username', 'u', '--partner-password', 'p'], t0)
      research = cliJson<{client_id: string}>(
        ['register-client', ...db, '--name', 'Research', '--url', 'https://r.example', '--logo-url', 'https://r.example/l.png', '--grant', 'conversations'],
        t0,
      )
      const member = (email: string) =>
        cliJson<{user_id: number}>(
          ['add-member', ...db, '--email', email, '--password', 'long enough password', '--first-name', 'S', '--last-name', 'T', '--country', 'US', '--specialty', 'Oncology'],
          t0,
        ).user_id
      const [ana, ben] = [member('ana@clinic.example'), member('ben@clinic.example')]
      cliJson(['credit', 'user_id', String(ana), '--amount', '100.5', '--type', 'honorarium', ...db], t0)
      cliJson(
        [
          'withdraw',
          'user_id',
          String(ana),
          '--type',
          'paypal',
          '--amount',
          '40',
          '--detail',
          'first_name=S',
          '--detail',
          'last_name=T',
          '--detail',
          'email=s@clinic.example',
          ...db,
        ],
        t0,
      )
      // 0.1 + 0.2: a float would make the total 60.800000000000004.
      cliJson(['credit', 'user_id', String(ben), '--amount', '0.1', '--type', 'incentive', ...db], t0)
      cliJson(['credit', 'user_id', String(ben), '--amount', '0.2', '--type', 'incentive', ...db], t0)
      // A project pushed and tried at once (refused: nothing listens), then a quota four days later:
      // trying the project's queue again gives the project's PUT up (past the 3-day retry window).
      cli(['push-project', ...db, '--project-id', 'P1', '--name', 'Study', '--duration', '10', '--status', 'active', '--type', 'custom', '--wait'], t0)
      const quota = specialtyQuotaFile(dir)
      const t4 = at('2026-01-05T00:00:00Z')
      cli(['push-quota', ...db, '--project-id', 'P1', '--file', quota, '--wait'], t4)
      cliJson(['push-project', ...db, '--project-id', 'P2', '--name', 'Second', '--duration', '5', '--status', 'active', '--type', 'custom'], at('2026-01-05T00:30:00Z'))
      // Keys: one with its whole allowance used (0 of 0 left), one far from it, one that makes no
      // data calls, and a revoked one.
      exhausted = cliJson<{id: string}>(['issue-api-key', research.client_id, '--data-calls', '0', ...db], t0)
      cliJson(['issue-api-key', research.client_id, '--data-calls', '10', ...db], t0)
      cliJson(['issue-api-key', research.client_id, '--methods', 'summary', '--data-calls', '0', ...db], t0)
      const revoked = cliJson<{id: string}>(['issue-api-key', research.client_id, '--data-calls', '0', ...db], t0)
      cliJson(['update-api-key', revoked.id, '--revoke', ...db], t0)
    })

    it('--json: counts, the exact total balance, the outbox per partner with a failed delivery, keys near their allowance', () => {
      const raw = cli(['status', ...db, '--json'], readAt)
      expect(raw.status, raw.stderr).toBe(0)
      // The total is written from its exact decimal text.
      expect(raw.stdout).toMatch(/"available_funds": 60\.8\n/)
      const report = JSON.parse(raw.stdout) as Status
      expect(report).toMatchObject({clients: 2, members: 2, balance: {accounts: 2, totals: [{currency: 'USD', available_funds: 60.8}]}})
      expect(report.outbox).toEqual({
        partners: [
          {
            client_id: partner.client_id,
            name: 'P',
            pending: 2,
            failed: 1,
            oldest_pending_at: '2026-01-05T00:00:00.000Z',
            oldest_pending_age_seconds: 3600,
          },
        ],
        pending: 2,
        failed_deliveries: 1,
      })
      expect(report.api_keys).toEqual({
        active: 2,
        near_allowance_percent: 80,
        near_allowance: [expect.objectContaining({id: exhausted.id, client_id: research.client_id, data_call_allowance: 0, data_calls_used: 0, used_percent: 100})],
      })
    })

    it('as a table: the total balance, the outbox per partner, the key at its allowance', () => {
      const text = cli(['status', ...db], readAt).stdout
      expect(text).toMatch(/^total balance +60\.80 USD$/m)
      expect(text).toMatch(new RegExp(`^${partner.client_id} +P +2 +2026-01-05T00:00:00\\.000Z +1h 0m +1$`, 'm'))
      expect(text).toMatch(new RegExp(`^${exhausted.id} +${research.client_id} +0/0 +100 +never$`, 'm'))
    })

    it('agrees with list-deliveries, which reads the same failed delivery', () => {
      // The same store, read again by the command that owns that part.
      expect(cliJson<unknown[]>(['list-deliveries', ...db, '--status', 'failed'])).toHaveLength(1)
    })
  })

  it('while serve runs on the store: answers at once, sees what serve just wrote, and serve keeps answering', async () => {
    const dir = tempDir()
    const db = ['--db', join(dir, 'served.db')]
    const research = cliJson<{client_id: string}>([
      'register-client',
      ...db,
      '--name',
      'Research',
      '--url',
      'https://r.example',
      '--logo-url',
      'https://r.example/l.png',
      '--grant',
      'conversations',
    ])
    const key = cliJson<{id: string; api_key: string}>(['issue-api-key', research.client_id, '--data-calls', '5', ...db])
    const server = await startCli(['serve', '--port', '0', '--no-worker', ...db])
    try {
      const dataCall = () =>
        fetch(`${server.url}/conversations/data?terms%5B%5D=metformin&start=2025-01-01T00:00:00Z&end=2025-12-31T23:59:59Z`, {
          headers: {'X-Service-Conversation-API-Key': key.api_key},
        })
      for (let i = 0; i < 3; i++) expect((await dataCall()).status).toBe(200)
      const before = status(db)
      expect(before.schema.pending).toEqual([])
      expect(before.api_keys).toEqual({active: 1, near_allowance_percent: 80, near_allowance: []})
      // The fourth call takes the key to 80% of its allowance.
      expect((await dataCall()).status).toBe(200)
      const after = status(db)
      expect(after.api_keys!.near_allowance).toEqual([
        {id: key.id, client_id: research.client_id, data_call_allowance: 5, data_calls_used: 4, data_calls_remaining: 1, used_percent: 80, renews_at: null},
      ])
      if (!onPostgres) expect(after.store.wal_bytes).toBeGreaterThan(0)
      // serve was never held up: it still answers, and its last call spends the last one.
      expect((await dataCall()).status).toBe(200)
      expect((await dataCall()).status).toBe(429)
      expect(status(db).api_keys!.near_allowance[0]).toMatchObject({data_calls_used: 5, used_percent: 100})
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('on a store that has never been migrated: every migration pending, nothing read, nothing created', () => {
    // SQLite: an empty file (a valid, empty database); PostgreSQL: a new empty database (not the
    // migrated copy storeFlags gives a CLI test).
    const file = join(tempDir(), 'empty.db')
    if (!onPostgres) writeFileSync(file, '', {mode: 0o600})
    const db = onPostgres ? ['--database-url', emptyStore().options.url!] : storeFlags(file)
    const empty = status(db)
    expect(empty.schema).toEqual({version: 'empty', latest: LATEST, pending: ALL, unknown: []})
    expect(empty).toMatchObject({clients: null, members: null, balance: null, outbox: null, api_keys: null})
    // Asked again: still empty, so the first look created nothing (not even the migrations table).
    expect(status(db).schema.pending).toEqual(ALL)
    if (!onPostgres) expect(statSync(file).size).toBe(0)
    expect(cli(['status', ...db]).stdout).toMatch(new RegExp(`^schema +empty, ${ALL.length} migrations pending: `, 'm'))
  })

  describe.skipIf(onPostgres)('SQLite store files', () => {
    it('on a store from release 0.3.0: reports its pending migration and leaves the file byte for byte as it was', () => {
      const dir = tempDir()
      const file = join(dir, 'store-0.3.0.db')
      copyFileSync(join(FIXTURES, 'store-0.3.0.db'), file)
      copyFileSync(join(FIXTURES, 'store-0.3.0.db.key'), `${file}.key`)
      // Git checks the fixtures out 0644, which the store refuses: an operator's copy is 0600.
      chmodSync(file, 0o600)
      chmodSync(`${file}.key`, 0o600)
      const bytes = readFileSync(file)
      const files = listing(dir)
      const fixture = JSON.parse(readFileSync(join(FIXTURES, 'store-0.3.0.json'), 'utf8')) as {row_counts: {partner_deliveries: number}}
      const old = status(['--db', file])
      // Pending: every migration since 0.3.0's, in order, from the first after it to this release's newest.
      expect(old.schema).toMatchObject({version: '2026112601_signin_sessions', latest: LATEST, unknown: []})
      expect(old.schema.pending[0]).toBe('2026112701_openid_connect')
      expect(old.schema.pending.at(-1)).toBe(LATEST)
      expect([...old.schema.pending].sort()).toEqual(old.schema.pending)
      expect(old).toMatchObject({clients: 2, members: 1, balance: {accounts: 1, totals: [{currency: 'USD', available_funds: 225.25}]}})
      expect(old.outbox!.pending).toBe(fixture.row_counts.partner_deliveries)
      expect(old.outbox!.partners.map((p) => p.name)).toEqual(['Fixture Partner'])
      expect(old.api_keys).toMatchObject({active: 1, near_allowance: []})
      const text = cli(['status', '--db', file])
      expect(text.stdout).toMatch(new RegExp(`^schema +2026112601_signin_sessions, ${old.schema.pending.length} migrations pending: ${old.schema.pending.join(', ')} `, 'm'))
      expect(readFileSync(file).equals(bytes)).toBe(true)
      expect(listing(dir)).toEqual(files)
    })

    it('on a store this user may not write (file 0400, directory 0555): reports it, creates nothing; list-* works too', () => {
      const dir = tempDir()
      const store = join(dir, 'store')
      const file = join(store, 'ro.db')
      mkdirSync(store)
      cliJson(['register-client', '--db', file, '--name', 'R', '--url', 'https://r.example', '--logo-url', 'https://r.example/l.png', '--redirect-uri', 'https://r.example/cb'])
      // A store made by the usual commands is in WAL mode; closed cleanly, it has no -wal or -shm.
      expect(readdirSync(store).sort()).toEqual(['ro.db', 'ro.db.key'])
      // The store file is owner-read-only; group and other bits would be refused outright (0600 policy).
      chmodSync(file, 0o400)
      chmodSync(store, 0o555)
      const files = listing(store)
      // In a user namespace the process keeps its owner but loses the power to override file modes:
      // the store is read-only for it, as for an operator without write permission.
      const asNobody = (args: string[]) => spawnSync('unshare', ['--user', ...cliArgv(args)], {encoding: 'utf8', env: process.env})
      try {
        const run = asNobody(['status', '--db', file, '--json'])
        if (/unshare/.test(run.stderr) && run.status !== 0) throw new Error(`user namespaces are not allowed here: ${run.stderr}`)
        expect(run.status, run.stderr).toBe(0)
        expect(JSON.parse(run.stdout)).toMatchObject({schema: {pending: []}, clients: 1})
        const list = asNobody(['list-clients', '--db', file, '--json'])
        expect(list.status, list.stderr).toBe(0)
        expect(JSON.parse(list.stdout)).toHaveLength(1)
        // A command that writes is still refused, in the store's terms.
        const write = asNobody(['credit', 'user_id', '1', '--amount', '1', '--type', 'incentive', '--db', file, '--json'])
        expect(write.status).toBe(1)
        expect(listing(store)).toEqual(files)
      } finally {
        chmodSync(store, 0o755)
      }
    })

    it('names a store that is not there, and creates none', () => {
      const dir = tempDir()
      const result = cli(['status', '--db', join(dir, 'missing.db')])
      expect(result.status).toBe(1)
      expect(result.stderr).toBe(`Error: there is no store at ${join(dir, 'missing.db')} (given with --db); nothing was created\n`)
      expect(readdirSync(dir)).toEqual([])
    })
  })
})
