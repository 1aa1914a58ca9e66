import {execFile} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openStore} from '../../src/schema.js'
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

/*
 * The loss of the PostgreSQL primary (docs/operations.md, High availability). pg_auto_failover
 * from Debian runs a monitor and two nodes on loopback, replicating synchronously
 * (scripts/pg-formation.sh); two `serve` processes use the formation's multi-host URL with
 * target_session_attrs=read-write. Under a load of withdrawals with Idempotency-Keys, token
 * issuance and partner pushes, the primary node dies (kill -9 of its keeper and its postgres).
 * Then: the standby is promoted, the serves find it by themselves and answer again within 30 s;
 * every request in flight got its interface's 503 (never a 500); every acknowledged withdrawal and
 * every issued token is on the new primary; the ledger is exact; the outbox delivered everything.
 *
 * It makes its formation itself, so it runs in the Node run alone (scripts/test-lists.mjs), and is
 * skipped where pg_auto_failover is not installed.
 */
const FORMATION_SH = fileURLToPath(new URL('../../scripts/pg-formation.sh', import.meta.url))
const MISSING = ['/usr/bin/pg_autoctl', '/usr/lib/postgresql/15/bin/pg_ctl'].find((path) => !existsSync(path))
const SKIP_REASON = MISSING && `skipped: ${MISSING} is missing (apt-get install pg-auto-failover-cli postgresql-15-auto-failover)`

function formation(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(FORMATION_SH, args, {timeout: 240_000}, (error, stdout, stderr) =>
      error ? reject(new Error(`pg-formation.sh ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout.trim()),
    ),
  )
}

type Kind = 'withdrawal' | 'token'

interface Sent {
  kind: Kind
  /** Sent after the primary was killed. */
  after: boolean
  outcome: Outcome
  /** When the answer arrived (ms since the epoch). */
  at: number
  key?: string
  member?: number
}

describe.skipIf(SKIP_REASON !== undefined)(`losing the PostgreSQL primary (pg_auto_failover)${SKIP_REASON ? `: ${SKIP_REASON}` : ''}`, () => {
  const dir = tempDir('medpanel-failover-')
  // The formation's directory (pg-formation.sh hands it to the postgres user when run as root).
  const cluster = tempDir('medpanel-formation-')
  const secretKey = process.env.MEDPANEL_SECRET_KEY
  let url: string
  let store: string[]
  let servers: RunningCli[] = []
  let partner: RecordingPartner
  let service: Service

  beforeAll(async () => {
    process.env.MEDPANEL_SECRET_KEY ??= randomBytes(32).toString('base64')
    url = await formation('start', cluster)
    store = ['--database-url', url]
    partner = await recordingPartner(10)
    service = await seedService(store, partner.url, 2)
    ;[servers] = await Promise.all([
      Promise.all([0, 1].map(() => startCli(['serve', ...store, '--port', '0']))),
      // A member list pushed one member per delivery: the worker is mid-stream when the primary dies.
      queueStudy(store, dir, 'F1', 60, 600000000),
    ])
    // Three initdbs and a base backup: 20-30 s on an idle 2-core machine, minutes on a loaded one.
  })

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGTERM')))
    await partner?.close()
    await formation('stop', cluster).catch(() => undefined)
    if (secretKey === undefined) delete process.env.MEDPANEL_SECRET_KEY
  })

  it('status names the primary and its synchronous standby', async () => {
    const status = await cliJsonAsync<{replication: {server: string; primary: boolean; synchronous_standby_attached: boolean; standbys: {sync_state: string}[]}}>([
      'status',
      ...store,
    ])
    expect(status.replication).toMatchObject({server: expect.stringMatching(/^127\.0\.0\.1:\d+$/), primary: true, synchronous_standby_attached: true})
    expect(status.replication.standbys.map((standby) => standby.sync_state)).toEqual(['quorum'])
  })

  it('nothing acknowledged is lost, the serves answer again within 30 s, in-flight writes get 503', async () => {
    const sent: Sent[] = []
    let killed = false
    let killedAt = 0
    let stopped = false
    let sequence = 0
    const send = async (kind: Kind, base: string): Promise<void> => {
      const after = killed
      if (kind === 'withdrawal') {
        const member = service.members[sequence % service.members.length]!
        const key = `failover-${sequence++}`
        const outcome = await withdraw(base, service.auth, member, '1.25', key)
        sent.push({kind, after, key, member, outcome, at: Date.now()})
      } else {
        const outcome = await call(`${base}/oauth/token`, {
          method: 'POST',
          headers: {authorization: service.auth, 'content-type': 'application/x-www-form-urlencoded'},
          body: 'grant_type=client_credentials',
        })
        sent.push({kind, after, outcome, at: Date.now()})
      }
    }
    const kinds: Kind[] = ['withdrawal', 'withdrawal', 'withdrawal', 'token']
    const loops = servers.flatMap((server) =>
      kinds.map(async (kind) => {
        while (!stopped) {
          await send(kind, server.url)
          // A refused or failing call comes back at once: do not spin on it.
          if (sent.at(-1)?.outcome.status !== 200 && sent.at(-1)?.outcome.status !== 201) await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }),
    )
    // Every kind answered `count` times since the kill (or before it): the service works (again).
    const answered = (count: number) => () =>
      kinds.every((kind) => sent.filter((s) => s.kind === kind && s.after === killed && (s.outcome.status === 200 || s.outcome.status === 201)).length >= count)
    const seen = () => {
      const counts: {[kindAndStatus: string]: number} = {}
      for (const s of sent.filter((s) => s.after === killed)) counts[`${s.kind} ${s.outcome.status}`] = (counts[`${s.kind} ${s.outcome.status}`] ?? 0) + 1
      return `${JSON.stringify(counts)}\n${servers.map((server) => server.stderr().slice(-2000)).join('\n')}`
    }
    let pendingAtKill = 0
    let victim = ''
    try {
      expect(await waitFor(answered(10), 30_000), `load before the kill: ${seen()}`).toBe(true)
      pendingAtKill = partner.log.length
      victim = await formation('kill', cluster)
      killedAt = Date.now()
      killed = true
      expect(await waitFor(answered(10), 30_000), `every interface answers again within 30 s of the primary's death: ${seen()}`).toBe(true)
    } finally {
      stopped = true
      await Promise.all(loops)
    }
    const firstAfter = sent.find((s) => s.after && s.kind === 'withdrawal' && s.outcome.status === 201)!
    console.info(`failover drill: ${victim} killed; first 201 on the new primary ${((firstAfter.at - killedAt) / 1000).toFixed(1)} s later`)

    // Both processes are still up: losing the primary never takes a process down.
    for (const server of servers) expect(server.child.exitCode, server.stderr()).toBeNull()
    // Each saw one failover, and the time it had no primary, now over; each one's cache listener
    // LISTENs on the new primary (its caches are on again, having dropped what they held).
    for (const server of servers) {
      const listening = async () => /^medpanel_store_pg_cache_listening 1$/m.test(((await call(`${server.url}/metrics`, {})) as {body?: string}).body ?? '')
      expect(await waitFor(listening, 30_000, 200), 'the cache listener is back').toBe(true)
      const metrics = await call(`${server.url}/metrics`, {})
      const body = (metrics as {body: string}).body
      expect(body).toMatch(/^medpanel_store_pg_failovers_total 1$/m)
      expect(body).toMatch(/^medpanel_store_pg_seconds_without_primary 0$/m)
      expect(Number(/^medpanel_store_pg_without_primary_seconds_total (\S+)$/m.exec(body)?.[1])).toBeGreaterThan(0)
    }

    // Every answer is a success or the interface's own 503 with Retry-After; nothing hung.
    const failed = sent.filter((s) => s.outcome.status !== 200 && s.outcome.status !== 201)
    for (const s of failed) {
      const outcome = s.outcome
      expect(outcome.status, `${s.kind}: ${JSON.stringify(outcome)}`).toBe(503)
      if (outcome.status !== 503) continue
      expect(outcome.headers.get('retry-after'), s.kind).toMatch(/^\d+$/)
      const body = JSON.parse(outcome.body) as {[field: string]: unknown}
      if (s.kind === 'withdrawal') expect(Object.keys(body), outcome.body).toEqual(['message'])
      if (s.kind === 'token') expect(body.error, outcome.body).toBe('temporarily_unavailable')
      expect(outcome.body, 'no internals').not.toMatch(/ at |\.[jt]s:\d|ECONN|SELECT|INSERT|terminated|Client|read-only/)
    }
    expect(failed.length, 'requests that met the failover').toBeGreaterThan(0)

    // The serves now write to the other node.
    const probe = await openStore({url})
    try {
      const {rows} = await (await import('kysely')).sql<{recovery: boolean}>`select pg_is_in_recovery() as recovery`.execute(probe.db)
      expect(rows[0]!.recovery).toBe(false)
      const state = await formation('state', cluster)
      expect(state, 'the killed node is no longer primary').not.toMatch(new RegExp(`^${victim} .*\\| +primary \\| +primary$`, 'm'))
    } finally {
      await probe.close()
    }

    // Nothing acknowledged is lost: every withdrawal answered 201 is in the ledger once, and a
    // withdrawal answered 503 sent again with its key ends as one transaction (the first one, if
    // its commit went through before the primary died).
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
    expect(sent.filter((s) => s.kind === 'withdrawal' && s.outcome.status === 201).length, 'withdrawals acknowledged before the kill and after it').toBeGreaterThan(0)

    // Every token issued before the kill is known to the new primary.
    const tokens = sent.filter((s) => s.kind === 'token' && s.outcome.status === 200 && !s.after)
    expect(tokens.length).toBeGreaterThan(0)
    for (const s of tokens) {
      const token = (JSON.parse((s.outcome as {body: string}).body) as {access_token: string}).access_token
      const answer = await call(`${servers[0]!.url}/oauth/introspect`, {
        method: 'POST',
        headers: {authorization: service.auth, 'content-type': 'application/x-www-form-urlencoded'},
        body: `token=${encodeURIComponent(token)}`,
      })
      expect(answer.status).toBe(200)
      expect(JSON.parse((answer as {body: string}).body), 'an acknowledged token survives').toMatchObject({active: true})
    }

    // The delivery workers carried on: the whole outbox is delivered, once and in order.
    await cliJsonAsync(['close-project', 'F1', ...store])
    const deliveries = await checkDeliveries(url, partner, 20_000)
    expect(pendingAtKill, 'deliveries were still to go when the primary died').toBeLessThan(deliveries.delivered.length)
  })
})
