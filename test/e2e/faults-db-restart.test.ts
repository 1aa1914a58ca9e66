import {execFile, spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {
  call,
  checkDeliveries,
  checkLedgers,
  cliJsonAsync,
  type Outcome,
  queueStudy,
  type RecordingPartner,
  recordingPartner,
  type Service,
  seedService,
  waitFor,
  withdraw,
} from '../helpers/faults.js'
import {onPostgres} from '../helpers/store.js'

/*
 * The PostgreSQL server restarted under load (pg_ctl restart, fast, then immediate), with two
 * `serve` processes answering interfaces A, C and E and delivering B all the while. A request in
 * flight fails in its interface's 503 shape, never a 500, a stack trace or a hang; the processes
 * reconnect by themselves; nothing acknowledged is lost; the delivery worker carries on.
 *
 * The test runs a cluster of its own (scripts/postgres.sh on a free port), so restarting it
 * disturbs no other test. PostgreSQL runs only.
 */
const POSTGRES_SH = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url))

/*
 * The throwaway cluster turns synchronous_commit off; this one turns it back on. An immediate
 * restart is a crash to PostgreSQL, and with synchronous_commit off a commit is acknowledged before
 * its WAL is written, so a crash loses it by design of that setting (and this test fails, as it
 * should: an acknowledged withdrawal is gone). fsync stays off: the operating system survives.
 */
const DURABLE = {...process.env, POSTGRES_OPTIONS: '-c synchronous_commit=on'}

function postgresSh(...args: string[]): string {
  const run = spawnSync(POSTGRES_SH, args, {encoding: 'utf8', timeout: 90_000, env: DURABLE})
  if (run.status !== 0) throw new Error(`postgres.sh ${args.join(' ')} exited ${run.status}: ${run.stderr}`)
  return run.stdout.trim()
}

/** The same without blocking this process: the load goes on while the server restarts. */
function restart(cluster: string, mode: 'fast' | 'immediate'): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(POSTGRES_SH, ['restart', cluster, mode], {timeout: 90_000, env: DURABLE}, (error, _stdout, stderr) =>
      error ? reject(new Error(`postgres.sh restart ${mode}: ${stderr}`)) : resolve(),
    ),
  )
}

type Kind = 'withdrawal' | 'token' | 'search'

interface Sent {
  kind: Kind
  /** How many restarts had completed when it was sent. */
  after: number
  outcome: Outcome
  key?: string
  member?: number
}

describe.skipIf(!onPostgres)('the PostgreSQL server restarted under load', () => {
  const dir = tempDir('medpanel-pg-restart-')
  // The cluster's own directory (postgres.sh hands it to the postgres user when run as root).
  const cluster = tempDir('medpanel-pgc-')
  let url: string
  let store: string[]
  let servers: RunningCli[] = []
  let partner: RecordingPartner
  let service: Service

  beforeAll(async () => {
    url = postgresSh('start', cluster, 'free')
    store = ['--database-url', url]
    partner = await recordingPartner(10)
    service = await seedService(store, partner.url, 2)
    ;[servers] = await Promise.all([
      Promise.all([0, 1].map(() => startCli(['serve', ...store, '--port', '0']))),
      // A member list pushed one member per delivery: the worker is mid-stream at each restart.
      queueStudy(store, dir, 'R1', 120, 500000000),
    ])
  })

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGTERM')))
    await partner?.close()
    postgresSh('stop', cluster)
  })

  it('in-flight requests get 503 in their own shape, the processes reconnect, nothing acknowledged is lost, deliveries go on', async () => {
    const sent: Sent[] = []
    let restarts = 0
    let stopped = false
    let sequence = 0
    const send = async (kind: Kind, base: string): Promise<void> => {
      const after = restarts
      if (kind === 'withdrawal') {
        const member = service.members[sequence % service.members.length]!
        const key = `restart-${sequence++}`
        sent.push({kind, after, key, member, outcome: await withdraw(base, service.auth, member, '1.25', key)})
      } else if (kind === 'token') {
        const outcome = await call(`${base}/oauth/token`, {
          method: 'POST',
          headers: {authorization: service.auth, 'content-type': 'application/x-www-form-urlencoded'},
          body: 'grant_type=client_credentials',
        })
        sent.push({kind, after, outcome})
      } else {
        const outcome = await call(`${base}/conversations/summary?terms%5B%5D=metformin&start=2025-01-01T00:00:00Z&end=2025-12-31T23:59:59Z`, {
          headers: {accept: 'application/vnd.service-v1+json', 'x-service-conversation-api-key': service.apiKey},
        })
        sent.push({kind, after, outcome})
      }
    }
    const kinds: Kind[] = ['withdrawal', 'withdrawal', 'withdrawal', 'token', 'search']
    const loops = servers.flatMap((server) =>
      kinds.map(async (kind) => {
        while (!stopped) {
          await send(kind, server.url)
          // A process that is gone fails every call at once: no need to spin on it.
          if (sent.at(-1)?.outcome.status === 'no answer') await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }),
    )
    // Every kind answered `count` times since the last restart: the service works (again).
    const answered = (count: number) => () =>
      kinds.every((kind) => sent.filter((s) => s.kind === kind && s.after === restarts && (s.outcome.status === 200 || s.outcome.status === 201)).length >= count)
    const seen = () => {
      const counts: {[kindAndStatus: string]: number} = {}
      for (const s of sent.filter((s) => s.after === restarts)) counts[`${s.kind} ${s.outcome.status}`] = (counts[`${s.kind} ${s.outcome.status}`] ?? 0) + 1
      return `${JSON.stringify(counts)}\n${servers.map((server) => server.stderr().slice(-2000)).join('\n')}`
    }
    const pendingAtRestart: number[] = []
    try {
      expect(await waitFor(answered(10), 30_000), `load before the first restart: ${seen()}`).toBe(true)
      for (const mode of ['fast', 'immediate'] as const) {
        pendingAtRestart.push(partner.log.length)
        await restart(cluster, mode)
        restarts++
        expect(await waitFor(answered(10), 30_000), `every interface answers again after the ${mode} restart: ${seen()}`).toBe(true)
      }
    } finally {
      stopped = true
      await Promise.all(loops)
    }

    // Both processes are still up: a connection the server dropped never takes a process down.
    for (const server of servers) expect(server.child.exitCode, server.stderr()).toBeNull()

    // Every answer is a success or the interface's own 503; nothing hung, nothing went unanswered.
    const failed = sent.filter((s) => s.outcome.status !== 200 && s.outcome.status !== 201)
    for (const s of failed) {
      const outcome = s.outcome
      expect(outcome.status, `${s.kind}: ${JSON.stringify(outcome)}`).toBe(503)
      if (outcome.status !== 503) continue
      expect(outcome.headers.get('retry-after'), s.kind).toMatch(/^\d+$/)
      const body = JSON.parse(outcome.body) as {[field: string]: unknown}
      if (s.kind === 'withdrawal') expect(Object.keys(body), outcome.body).toEqual(['message'])
      if (s.kind === 'token') expect(body.error, outcome.body).toBe('temporarily_unavailable')
      if (s.kind === 'search') expect(body, outcome.body).toMatchObject({code: 503, message: 'service temporarily unavailable'})
      expect(outcome.body, 'no internals').not.toMatch(/ at |\.[jt]s:\d|ECONN|SELECT|INSERT|terminated|Client/)
    }
    // The restarts did land under load: requests met them.
    expect(failed.length, 'requests that met a restart').toBeGreaterThan(0)

    // Nothing acknowledged is lost: a withdrawal answered 503 is sent again with its key and ends
    // as one transaction (the first one, if its commit went through before the connection broke).
    const acknowledged = new Map<string, string>()
    for (const s of sent.filter((s) => s.kind === 'withdrawal')) {
      let outcome = s.outcome
      if (outcome.status !== 201) outcome = await withdraw(servers[0]!.url, service.auth, s.member!, '1.25', s.key!)
      expect(outcome.status, JSON.stringify(outcome)).toBe(201)
      if (outcome.status === 201) acknowledged.set(s.key!, (JSON.parse(outcome.body) as {transaction_id: string}).transaction_id)
    }
    const ledger = await checkLedgers(servers[1]!.url, service.auth, service.members)
    for (const [key, id] of acknowledged) expect(ledger.seen.get(id), key).toBe(1)
    expect(ledger.withdrawals, 'one withdrawal per Idempotency-Key').toBe(acknowledged.size)

    // The delivery workers carried on through both restarts: a change pushed now arrives too, and
    // the whole outbox is delivered in each project's order.
    await cliJsonAsync(['close-project', 'R1', ...store])
    // Well inside the 30 s lease: a worker whose own lease outlived a failed write frees it at once.
    const deliveries = await checkDeliveries(url, partner, 15_000)
    for (const before of pendingAtRestart) expect(before, 'deliveries were still to go at each restart').toBeLessThan(deliveries.delivered.length)
  })
})
