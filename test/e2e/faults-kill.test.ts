import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {openStore, type Store} from '../../src/store/db.js'
import {type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {
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
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'

/*
 * kill -9 of one of three `serve` processes on one PostgreSQL database while withdrawals arrive
 * at all three and the victim is sending partner pushes. Acknowledged withdrawals exist exactly
 * once, an unanswered one retried with its Idempotency-Key ends as one transaction, balances
 * stay credits minus debits; the survivors take over the victim's leased deliveries and every
 * delivery arrives, in each project's order, a resend only as the same request.
 *
 * The survivors run on the victim's host, so they free its leases as soon as they see its process
 * is gone (within their 500 ms poll). A survivor on another host would wait for the lease to run
 * out (30 s: config.partner, the request timeout plus slack); that path is not exercised here.
 */
const PROJECTS = ['K1', 'K2', 'K3']

interface Attempt {
  server: number
  key: string
  member: number
  outcome: Outcome
}

describe.skipIf(!onPostgres)('one of three serve processes killed with SIGKILL mid-stream', () => {
  const dir = tempDir('medpanel-kill-')
  let url: string
  let store: string[]
  let servers: RunningCli[] = []
  let partner: RecordingPartner
  let service: Service
  let db: Store

  beforeAll(async () => {
    url = await freshDatabaseUrl()
    store = ['--database-url', url]
    partner = await recordingPartner(20)
    service = await seedService(store, partner.url, 2)
    db = await openStore({url})
  }, 120_000)

  afterAll(async () => {
    await Promise.all(servers.filter((server) => server.child.exitCode === null && server.child.signalCode === null).map((server) => server.stop('SIGTERM')))
    await partner?.close()
    await db?.close()
  })

  it('loses no acknowledged withdrawal and no delivery; the survivors take over', async () => {
    /** The rows a process holds leases on (its worker's owner id is host:pid:random). */
    const leasedBy = async (server: RunningCli) =>
      (await db.db.selectFrom('partner_deliveries').select(['id', 'seq', 'lease_owner']).where('status', '=', 'pending').execute()).filter(
        (row) => row.lease_owner?.split(':')[1] === String(server.child.pid),
      )

    // The outbox is filled first and the victim starts alone, so its worker claims the head of
    // every project; the partner holds its answers until the other two are up.
    await Promise.all(PROJECTS.map((project, i) => queueStudy(store, dir, project, 30, 600000000 + i * 1000)))
    partner.hold()
    const victim = await startCli(['serve', ...store, '--port', '0'])
    servers = [victim]
    expect(await waitFor(async () => (await leasedBy(victim)).length === PROJECTS.length, 20_000), 'the victim claims every project').toBe(true)
    servers.push(...(await Promise.all([0, 1].map(() => startCli(['serve', ...store, '--port', '0'])))))
    partner.release()

    // Withdrawals with Idempotency-Keys at all three, three callers each.
    const attempts: Attempt[] = []
    const stoppedAt = new Set<number>()
    let stopped = false
    let sequence = 0
    const loops = servers.flatMap((server, index) =>
      [0, 1, 2].map(async () => {
        while (!stopped && !stoppedAt.has(index)) {
          const member = service.members[sequence % service.members.length]!
          const key = `kill-${sequence++}`
          const outcome = await withdraw(server.url, service.auth, member, '1.25', key)
          attempts.push({server: index, key, member, outcome})
          if (outcome.status === 'no answer') stoppedAt.add(index)
        }
      }),
    )
    const acked = () => attempts.filter((a) => a.outcome.status === 201).length
    let killedAt = 0
    let takeover: Promise<number> = Promise.resolve(Number.NaN)
    let takenOver: {id: string; seq: number}[] = []
    try {
      expect(await waitFor(() => acked() >= 30 && partner.log.length >= 10, 30_000), 'withdrawals and pushes under way').toBe(true)
      // Hold the partner's answers so the victim's sends stay in flight, and kill it while it
      // holds leases (should the others hold every project's head this time, try again).
      for (let tries = 0; takenOver.length === 0; tries++) {
        expect(tries, 'the victim never held a lease while the partner held answers').toBeLessThan(40)
        partner.hold()
        // In flight: leased by the victim and already at the partner, its answer held.
        const inFlight = async () => (await leasedBy(victim)).filter((row) => partner.log.some((entry) => entry.id === row.id))
        await waitFor(async () => (await inFlight()).length > 0, 2_000)
        takenOver = await inFlight()
        if (takenOver.length === 0) {
          partner.release()
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
      const exited = new Promise((resolve) => victim.child.once('exit', resolve))
      process.kill(victim.child.pid!, 'SIGKILL')
      await exited
      killedAt = Date.now()
      partner.release()
      // How long the survivors take to deliver what the victim held (polled beside the rest).
      takeover = (async () => {
        const ids = takenOver.map((row) => row.id)
        await waitFor(
          async () => (await db.db.selectFrom('partner_deliveries').select('id').where('id', 'in', ids).where('status', '=', 'delivered').execute()).length === ids.length,
          30_000,
          20,
        )
        return Date.now() - killedAt
      })()
      // The lifecycle goes on after the kill (the survivors deliver these too), and so do the
      // withdrawals at the survivors.
      const ackedAtKill = acked()
      await Promise.all(PROJECTS.map((project) => cliJsonAsync(['close-project', project, ...store])))
      expect(await waitFor(() => acked() >= ackedAtKill + 15, 30_000), 'the survivors go on answering').toBe(true)
    } finally {
      stopped = true
      await Promise.all(loops)
    }

    // The survivors answered everything; only the victim left requests unanswered.
    for (const a of attempts) {
      if (a.server === 0) expect(['201', 'no answer'], JSON.stringify(a.outcome)).toContain(String(a.outcome.status))
      else expect(a.outcome.status, JSON.stringify(a.outcome)).toBe(201)
    }
    const unanswered = attempts.filter((a) => a.outcome.status !== 201)
    expect(unanswered.length, 'requests the kill cut off').toBeGreaterThan(0)

    // Retrying each unanswered request with its key gives one transaction: the committed one
    // (Idempotent-Replayed) or a new one.
    const acknowledged = new Map<string, string>()
    for (const a of attempts) {
      let outcome = a.outcome
      if (outcome.status !== 201) {
        outcome = await withdraw(servers[1]!.url, service.auth, a.member, '1.25', a.key)
      }
      expect(outcome.status, JSON.stringify(outcome)).toBe(201)
      if (outcome.status === 201) acknowledged.set(a.key, (JSON.parse(outcome.body) as {transaction_id: string}).transaction_id)
    }
    const ledger = await checkLedgers(servers[2]!.url, service.auth, service.members)
    for (const [key, id] of acknowledged) expect(ledger.seen.get(id), key).toBe(1)
    expect(ledger.withdrawals, 'one withdrawal per Idempotency-Key').toBe(acknowledged.size)

    // Every delivery arrives, in order; the victim's in-flight sends were sent again by the others.
    const deliveries = await checkDeliveries(url, partner, 30_000)
    const tookOver = await takeover
    expect(deliveries.resent, 'the victim’s in-flight sends, sent again').toBeGreaterThanOrEqual(1)
    expect(deliveries.resent).toBeLessThanOrEqual(takenOver.length)
    const delivered = new Set(deliveries.delivered.map((row) => row.id))
    for (const row of takenOver) expect(delivered.has(row.id), `${row.id}, leased by the victim`).toBe(true)
    // Same host: the survivors free the dead process's leases at their next poll, not after 30 s.
    expect(tookOver, 'ms from the kill until the victim’s rows were delivered').toBeLessThan(20_000)
  }, 120_000)
})
