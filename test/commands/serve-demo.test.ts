import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cli, cliJson, memberRegistration, tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'
import {scaledBound, timeOf} from '../helpers/timing.js'

describe('serve --demo', () => {
  it('exits 1 with one Error line, instead of lingering, when the demo cannot be seeded', async () => {
    const db = join(tempDir(), 'clash.db')
    // The demo doctor's NPI is already someone else's. That command, timed, is the baseline: a
    // refusal takes about as long as one command, a serve that lingers takes until it is killed.
    const command = await timeOf(() => cliJson([...memberRegistration(['--db', db]), '--npi', '1234567893']))
    let result: ReturnType<typeof cli> | undefined
    const took = await timeOf(() => {
      result = cli(['serve', '--demo', '--no-worker', '--port', '0', '--db', db])
    })
    expect(result!.status).toBe(1)
    expect(result!.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Error: this store already holds 0 client\(s\) and 1 member\(s\)/)])
    expect(took).toBeLessThan(scaledBound(20_000, command, 10))
  })
})

describe('readiness', () => {
  it('until the demo data exists, /healthz says 503 "starting", /livez 200 and a withdrawal is refused 503 unwritten; then the credentials work', async () => {
    const {spawn} = await import('node:child_process')
    const {cliArgv} = await import('../helpers/cli.js')
    const {createServer} = await import('node:net')
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const {port} = probe.address() as {port: number}
        probe.close(() => resolve(port))
      })
    })
    const [command, ...argv] = cliArgv(['serve', '--demo', '--no-worker', '--port', String(port), '--db', join(tempDir(), 'ready.db')])
    const child = spawn(command, argv, {stdio: 'ignore'})
    const base = `http://127.0.0.1:${port}`
    const demo = {authorization: `Basic ${Buffer.from('demo-client:demo-client-secret').toString('base64')}`}
    // What the partner walkthrough's scripts did while the demo seeded: a withdrawal of the demo doctor's.
    const withdraw = () =>
      fetch(`${base}/balance/user_id/1/withdrawals`, {
        method: 'POST',
        headers: {...demo, 'content-type': 'application/json'},
        body: JSON.stringify({type: 'PAYPAL', amount: 10, member_details: {first_name: 'Dana', last_name: 'Whitfield', email: 'dana@example.com'}}),
      }).catch(() => undefined)
    try {
      const seen: number[] = []
      let refused = 0
      let accepted = 0
      // Until it says ready, however slow a loaded machine makes the seeding (a hang is the test's time limit).
      for (const until = Date.now() + 150_000; Date.now() < until; ) {
        const withdrawal = await withdraw()
        const res = await fetch(`${base}/healthz`).catch(() => undefined)
        if (withdrawal && res) {
          if (withdrawal.status === 503) {
            refused++
            expect(withdrawal.headers.get('retry-after')).toBe('1')
          } else {
            // Answered at all, it was answered once ready: /healthz after it cannot say starting.
            expect(withdrawal.status).toBe(201)
            expect(res.status).toBe(200)
            accepted++
          }
        }
        if (res) {
          seen.push(res.status)
          const body = (await res.json()) as {status: string; reason?: string}
          if (res.status === 503) {
            expect(body).toMatchObject({status: 'starting', reason: 'seeding the demo data set'})
            const live = await fetch(`${base}/livez`)
            expect([live.status, await live.json()]).toEqual([200, {status: 'alive'}])
          }
          if (res.status === 200) break
        }
        await new Promise((r) => setTimeout(r, 5))
      }
      expect(seen.at(-1)).toBe(200)
      expect(refused).toBeGreaterThan(0)
      // The refused withdrawals left no trace: the demo doctor has the seeded 178.00, less those accepted.
      const summary = await fetch(`${base}/balance/user_id/1/summary`, {headers: demo})
      expect(((await summary.json()) as {available_funds: number}).available_funds).toBe(178 - 10 * accepted)
      // The moment it says ready, the demo's published credentials work.
      const token = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({grant_type: 'client_credentials', client_id: 'demo-client', client_secret: 'demo-client-secret'}),
      })
      expect(token.status).toBe(200)
    } finally {
      process.kill(child.pid!, 'SIGTERM')
    }
  })
})

describe('the demo keeps to a store of its own', () => {
  // The default demo store is a SQLite file in the working directory; a PostgreSQL run names its database.
  it.skipIf(onPostgres)('seeds ./medpanel-demo.db by default, and refuses a store with real clients or members unless --force, which warns', async () => {
    const {cli: run} = await import('../helpers/cli.js')
    const {existsSync} = await import('node:fs')
    const dir = tempDir()
    const inDir = (args: string[]) => run(args)
    // Run from the temporary directory so the default files land there.
    const cwd = process.cwd()
    process.chdir(dir)
    try {
      expect(cliJson(['demo']).client.client_id).toBe('demo-client')
      expect(existsSync(join(dir, 'medpanel-demo.db'))).toBe(true)
      expect(existsSync(join(dir, 'medpanel.db'))).toBe(false)

      cliJson([
        'add-member',
        '--email',
        'real@clinic.example',
        '--password',
        'a real password',
        '--first-name',
        'R',
        '--last-name',
        'M',
        '--country',
        'US',
        '--specialty',
        'Oncology',
      ])
      const refused = inDir(['demo', '--db', './medpanel.db', '--json'])
      expect(refused.status).toBe(1)
      expect(refused.stdout).toBe('')
      expect(refused.stderr).toMatch(/^Error: this store already holds 0 client\(s\) and 1 member\(s\) that the demo did not make; .*--force\n$/)
      expect(cliJson<unknown[]>(['list-clients'])).toEqual([])

      const forced = inDir(['demo', '--db', './medpanel.db', '--force', '--json'])
      expect(forced.status).toBe(0)
      expect(forced.stderr).toMatch(/^Warning: .*seeding anyway \(--force\)/)
    } finally {
      process.chdir(cwd)
    }
  })
})
