import {hostname} from 'node:os'
import {narrow} from '../../store/database.js'
import {MEDPANEL_VERSION} from '../../version.js'
import {iso, type Clock} from '../../lib/clock.js'
import {randomToken} from '../../lib/ids.js'
import {findClient} from '../../registry/repository.js'
import {hasGrant} from '../../registry/service.js'
import {unseal, type Keyring} from '../../store/secrets.js'
import {writeTransaction} from '../../store/transactions.js'
import type {CountersOf, Metrics} from '../../metrics/metrics.js'
import {storeFailure} from '../../store/failure.js'
import {printable} from '../../lib/printable.js'
import {createLogger, type LogFormat, type Logger} from '../../lib/log.js'
import type {PartnerDb as Db} from './tables.js'
import {nextAttemptDelay} from './outbox.js'
import * as repo from './repository.js'
import type {DeliveryRow} from './tables.js'
import {basicAuthorization} from './transport.js'
import {signatureHeaders} from './signatures.js'
import {networkFailure, RefusedTarget, type Transport} from '../../http/outbound.js'
import {partnerConfig} from './config.js'
import {partnerMetrics} from './metrics.js'

export const REQUEST_TIMEOUT_MS = partnerConfig.requestTimeoutMs
/** How long a claimed row stays reserved for its sender: the request timeout plus slack. */
const LEASE_MS = REQUEST_TIMEOUT_MS + partnerConfig.leaseSlackMs
const USER_AGENT = `medpanel-delivery/${MEDPANEL_VERSION}`

export interface WorkerOptions {
  db: Db
  /** The store's keys, which open the partners' sealed passwords and signing secrets. */
  keys: Keyring
  clock: Clock
  transport: Transport
  /** Projects sent side by side; each project's own deliveries always go one at a time. */
  concurrency?: number
  timeoutMs?: number
  log?: (line: string) => void
  /** The shape of those lines (serve --log-format); text unless told. */
  logFormat?: LogFormat
  /** Called after each attempt, e.g. to move a progress bar. */
  onAttempt?: (row: DeliveryRow, ok: boolean) => void
  /** The serving app's registry, where attempts and retries are counted; none in an operator's command. */
  metrics?: Metrics | undefined
}

export interface DrainOptions {
  projectIds?: string[]
  /** Send pending rows of these projects now, ignoring their backoff, each at most once per drain. */
  now?: boolean
}

export interface DrainResult {
  attempted: number
  delivered: number
  failedAttempts: number
}

/** What the worker counts into (src/interfaces/partner/metrics.ts). */
type PartnerCounters = CountersOf<typeof partnerMetrics>

/**
 * Sends the outbox. Claims the head of each partner's project queue (see repository `claimable`),
 * leases it so no other process sends it at the same time, sends it, and records the outcome.
 * A process that dies mid-send leaves its rows pending: they are sent again after a restart
 * (the X-Medpanel-Delivery id lets the partner drop the duplicate).
 */
export class DeliveryWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`
  private readonly db: Db
  private readonly keys: Keyring
  private readonly clock: Clock
  private readonly transport: Transport
  private readonly concurrency: number
  private readonly timeoutMs: number
  private readonly logger: Logger
  private readonly onAttempt: WorkerOptions['onAttempt']
  private readonly counted: PartnerCounters | undefined
  private running = false
  private stopping = false
  /** Rows this worker has claimed and not yet finished with (see releaseDeadLeases). */
  private readonly holding = new Set<number>()
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined

  constructor(options: WorkerOptions) {
    this.db = options.db
    this.keys = options.keys
    this.clock = options.clock
    this.transport = options.transport
    this.concurrency = options.concurrency ?? 8
    this.timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS
    this.logger = createLogger(options.log ?? (() => {}), options.logFormat)
    this.onAttempt = options.onAttempt
    this.counted = options.metrics?.of(partnerMetrics)
  }

  /**
   * Sends everything that is due (or, with `now`, everything pending of the given projects once),
   * round after round until nothing more can go. Returns what happened.
   */
  async drain(options: DrainOptions = {}): Promise<DrainResult> {
    await this.releaseDeadLeases()
    const result: DrainResult = {attempted: 0, delivered: 0, failedAttempts: 0}
    const tried: number[] = []
    const giveUpAt = this.clock.now().getTime() + LEASE_MS
    let lookedAgain = false
    for (;;) {
      const rows = await this.claim(options, tried)
      if (rows.length === 0) {
        // A `--wait` run whose project is mid-send in another process (serve's worker) waits for
        // that send to finish rather than reporting its own rows as stuck behind it.
        if (options.now && this.clock.now().getTime() < giveUpAt) {
          if (await this.othersSending(options.projectIds)) {
            await pause(50)
            lookedAgain = false
            continue
          }
          // The other sender may have finished between the empty claim and that check, leaving
          // this run's rows claimable: claim once more before reporting them as not sent.
          if (!lookedAgain) {
            lookedAgain = true
            continue
          }
        }
        return result
      }
      lookedAgain = false
      const outcomes = await Promise.all(rows.map((row) => this.attempt(row)))
      for (const [i, ok] of outcomes.entries()) {
        tried.push(rows[i]!.seq)
        result.attempted++
        if (ok) result.delivered++
        else result.failedAttempts++
      }
      if (!options.now) tried.length = 0
      // A stop lets the round in flight finish and be recorded, and claims no more: what is
      // still pending stays unleased for the next process.
      if (this.stopping) return result
    }
  }

  /** Runs in the background: drains, then sleeps until the next row is due or `pollMs` passes. */
  start(pollMs: number = partnerConfig.pollMs): void {
    if (this.running) return
    this.running = true
    this.loop = (async () => {
      while (this.running) {
        try {
          await this.drain()
        } catch (error) {
          const message = (error as Error).message
          this.logger.log('error', `delivery worker: ${message}`, 'delivery worker failed', {interface: 'B', error: message})
        }
        if (!this.running) break
        const due = await repo.nextDue(this.db, iso(this.clock.now())).catch(() => undefined)
        const untilDue = due ? Date.parse(due) - this.clock.now().getTime() : pollMs
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(20, Math.min(pollMs, untilDue)))
          this.wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
        this.wake = undefined
      }
    })()
  }

  /** Whether a send is in flight now (a row claimed and its outcome not yet recorded). */
  delivering(): boolean {
    return this.holding.size > 0
  }

  /** Stops claiming new rows and waits for the sends in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.running = false
    this.stopping = true
    this.wake?.()
    await this.loop
  }

  private async claim(options: DrainOptions, tried: number[]): Promise<DeliveryRow[]> {
    const now = this.clock.now()
    // On PostgreSQL the claim locks the rows it picks and skips rows other workers hold, in a
    // READ COMMITTED transaction, so workers in several processes never wait on or fail over
    // each other's claims; each project's order holds because a row is only claimable once every
    // older row of its project has left `pending`.
    const filter = {now: iso(now), projectIds: options.projectIds, ignoreSchedule: options.now, exclude: tried}
    // Most polls find nothing to send. Asking first with a read keeps an idle worker from
    // committing a write transaction (and taking SQLite's write lock) twice a second.
    if (!(await repo.anyClaimable(this.db, filter))) return []
    return writeTransaction(
      this.db,
      async (trx) => {
        const rows = await repo.claimable(trx, {...filter, limit: this.concurrency})
        await repo.lease(
          trx,
          rows.map((r) => r.seq),
          this.owner,
          iso(new Date(now.getTime() + LEASE_MS)),
        )
        return rows
      },
      {isolation: 'read committed'},
    )
  }

  /** One attempt, with the row counted as held by this worker while it runs. */
  private async attempt(row: DeliveryRow): Promise<boolean> {
    this.holding.add(row.seq)
    try {
      return await this.deliver(row)
    } finally {
      this.holding.delete(row.seq)
    }
  }

  /** One attempt; true when the partner answered 2xx. */
  private async deliver(row: DeliveryRow): Promise<boolean> {
    const client = await findClient(narrow(this.db), row.client_id)
    if (!client || !hasGrant(client, 'partner') || !client.partner_url || !client.partner_username || !client.partner_password || client.expired_at !== null) {
      await this.finish(row, {ok: false, permanent: true, error: `partner client ${row.client_id} is gone, expired or has no partner URL and credentials`})
      this.counted?.attempts.undeliverable.inc()
      return false
    }
    const stored = await repo.deliveryBody(this.db, row.seq)
    const body = stored ?? ''
    const headers: Record<string, string> = {
      authorization: basicAuthorization(client.partner_username, unseal(this.keys, client.partner_password)),
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': USER_AGENT,
      'x-medpanel-delivery': row.id,
    }
    // The CLI run or request that queued the change: the partner can log it beside its own lines.
    if (row.request_id) headers['x-request-id'] = row.request_id
    // Signed at each attempt, so the time is this attempt's; webhook-id is the delivery id, the same on every retry.
    if (client.signing_secret) Object.assign(headers, signatureHeaders(unseal(this.keys, client.signing_secret), row.id, Math.floor(this.clock.now().getTime() / 1000), body))
    const url = client.partner_url.replace(/\/+$/, '') + row.path
    let outcome: {ok: boolean; status?: number; error?: string}
    try {
      // Only the status and the start of an error text matter: the rest of an answer is never read.
      const response = await this.transport.send({method: row.method, url, headers, body: stored ?? undefined}, this.timeoutMs, {
        maxBodyBytes: partnerConfig.responseBodyLimitBytes,
      })
      const ok = response.status >= 200 && response.status < 300
      // The partner's words are stored and later printed: escaped here, before either.
      outcome = ok
        ? {ok, status: response.status}
        : {ok, status: response.status, error: `HTTP ${response.status}${response.body ? `: ${printable(response.body.replace(/[ \t\r\n]+/g, ' ').slice(0, 200))}` : ''}`}
    } catch (error) {
      const failure = networkFailure(error)
      const reason = failure.timeout ? `timed out after ${this.timeoutMs / 1000} s` : failure.reason
      // A refused target (its name now leads to a link-local address) is retried like any
      // failure: list-deliveries shows why, and the row goes once DNS points somewhere sound.
      outcome = {ok: false, error: error instanceof RefusedTarget ? reason : `network error: ${reason}`}
    }
    const status = await this.finish(row, outcome)
    this.counted?.attempts[outcome.ok ? 'delivered' : outcome.status === undefined ? 'network_error' : 'failed'].inc()
    this.logger.log(
      outcome.ok ? 'info' : status === 'failed' ? 'error' : 'warn',
      `delivery ${row.id} ${row.method} ${row.path} -> ${outcome.ok ? `delivered (${outcome.status})` : outcome.error}${row.request_id ? ` id=${row.request_id}` : ''}`,
      'delivery attempt',
      {
        interface: 'B',
        delivery_id: row.id,
        request_id: row.request_id,
        client_id: row.client_id,
        method: row.method,
        path: row.path,
        attempt: row.attempts + 1,
        outcome: status,
        status: outcome.status ?? null,
        error: outcome.error,
      },
    )
    this.onAttempt?.(row, outcome.ok)
    return outcome.ok
  }

  /**
   * Records an attempt; returns the row's status after it (pending: tried again later). A store
   * that cannot be reached right now (a database restart takes seconds) is tried again until the
   * lease is nearly over, so a push that reached the partner is recorded, not sent a second time.
   */
  private async finish(row: DeliveryRow, outcome: {ok: boolean; status?: number; error?: string; permanent?: boolean}): Promise<'delivered' | 'pending' | 'failed'> {
    const leaseEnds = Date.now() + LEASE_MS - this.timeoutMs
    const {first, most} = partnerConfig.recordRetryMs
    for (let wait: number = first; ; wait = Math.min(wait * 2, most)) {
      try {
        return await this.record(row, outcome)
      } catch (error) {
        if (storeFailure(error) === undefined || this.stopping || Date.now() + wait >= leaseEnds) throw error
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }

  private async record(row: DeliveryRow, outcome: {ok: boolean; status?: number; error?: string; permanent?: boolean}): Promise<'delivered' | 'pending' | 'failed'> {
    const now = this.clock.now()
    const stamp = iso(now)
    const attempts = row.attempts + 1
    const firstAttemptAt = row.first_attempt_at ?? stamp
    const common = {attempts, first_attempt_at: firstAttemptAt, last_status: outcome.status ?? null, lease_owner: null, lease_until: null, updated_at: stamp}
    if (outcome.ok) {
      await repo.updateDelivery(this.db, row.seq, {...common, status: 'delivered', delivered_at: stamp, last_error: null})
      return 'delivered'
    }
    const delay = outcome.permanent ? null : nextAttemptDelay(attempts, new Date(firstAttemptAt), now)
    await repo.updateDelivery(this.db, row.seq, {
      ...common,
      last_error: outcome.error ?? 'failed',
      status: delay === null ? 'failed' : 'pending',
      next_attempt_at: delay === null ? row.next_attempt_at : iso(new Date(now.getTime() + delay * 1000)),
    })
    if (delay !== null) this.counted?.retriesScheduled.inc()
    return delay === null ? 'failed' : 'pending'
  }

  private async othersSending(projectIds: string[] | undefined): Promise<boolean> {
    const stamp = iso(this.clock.now())
    return (await repo.leasedRows(this.db)).some(
      (row) => row.lease_owner !== this.owner && row.lease_until !== null && row.lease_until >= stamp && (!projectIds || projectIds.includes(row.project_id)),
    )
  }

  /**
   * Frees rows leased by a process of this host that no longer exists (killed mid-send), and this
   * worker's own leases on rows it no longer holds: an attempt that failed because the store went
   * away (a database restart) before its outcome could be written leaves its row leased, and it
   * is sent again now rather than when the lease runs out.
   */
  private async releaseDeadLeases(): Promise<void> {
    const host = hostname()
    const dead: number[] = []
    for (const row of await repo.leasedRows(this.db)) {
      if (row.lease_owner === this.owner) {
        if (!this.holding.has(row.seq)) dead.push(row.seq)
        continue
      }
      const [ownerHost, pid] = (row.lease_owner ?? '').split(':')
      if (ownerHost !== host) continue
      if (!isAlive(Number(pid))) dead.push(row.seq)
    }
    if (dead.length) await repo.releaseLeases(this.db, dead)
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Waits `ms` milliseconds. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
