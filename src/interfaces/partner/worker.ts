import {narrow} from '../../store/database.js'
import {MEDPANEL_VERSION} from '../../version.js'
import type {Clock} from '../../lib/clock.js'
import type {Logger} from '../../lib/log.js'
import {findClient} from '../../registry/repository.js'
import {hasGrant} from '../../registry/service.js'
import {unseal, type Keyring} from '../../store/secrets.js'
import {writeTransaction} from '../../store/transactions.js'
import type {CountersOf, Metrics} from '../../metrics/metrics.js'
import {OutboxRunner, type Outbox, type Outcome, type Settled} from '../../store/outbox-runner.js'
import {printable} from '../../lib/printable.js'
import type {LogFormat} from '../../lib/log.js'
import type {PartnerDb as Db} from './tables.js'
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

/** Which projects a drain sends; all when unset. */
interface ProjectFilter {
  projectIds?: string[] | undefined
}

/** What the worker counts into (src/interfaces/partner/metrics.ts). */
type PartnerCounters = CountersOf<typeof partnerMetrics>

/**
 * Sends the partner outbox (outbox.ts writes it) through the store's outbox runner, which leases,
 * records, retries and frees dead leases for every outbox (src/store/outbox-runner.ts). What is
 * the partners' own: the claim takes the head of each partner's project queue (repository
 * `claimable`), so a project's pushes arrive in order; each push carries HTTP Basic credentials,
 * an X-Medpanel-Delivery id (the same on every attempt, so the partner can drop a duplicate after
 * a process died mid-send) and, for a partner with a signing secret, Standard Webhooks signatures.
 */
export class DeliveryWorker {
  private readonly runner: OutboxRunner<DeliveryRow, number, ProjectFilter>

  constructor(options: WorkerOptions) {
    const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS
    this.runner = new OutboxRunner(new PartnerOutbox(options, timeoutMs), {
      clock: options.clock,
      log: options.log,
      logFormat: options.logFormat,
      timeoutMs,
      recordRetryMs: partnerConfig.recordRetryMs,
    })
  }

  /** This worker's name on the rows it leases (host:pid:random). */
  get owner(): string {
    return this.runner.owner
  }

  /**
   * Sends everything that is due (or, with `now`, everything pending of the given projects once),
   * round after round until nothing more can go. Returns what happened.
   */
  async drain(options: DrainOptions = {}): Promise<DrainResult> {
    const {attempted, delivered, failedAttempts} = await this.runner.drain({projectIds: options.projectIds}, options.now ?? false)
    return {attempted, delivered, failedAttempts}
  }

  /** Runs in the background: drains, then sleeps until the next row is due or `pollMs` passes. */
  start(pollMs: number = partnerConfig.pollMs): void {
    this.runner.start({}, pollMs)
  }

  /** Whether a send is in flight now (a row claimed and its outcome not yet recorded). */
  delivering(): boolean {
    return this.runner.delivering()
  }

  /** Stops claiming new rows and waits for the sends in flight to finish and be recorded. */
  stop(): Promise<void> {
    return this.runner.stop()
  }
}

/** The partner_deliveries table and what a push sends. */
class PartnerOutbox implements Outbox<DeliveryRow, number, ProjectFilter> {
  readonly name = 'delivery worker'
  readonly interfaceName = 'B'
  readonly leaseMs = LEASE_MS
  readonly schedule = partnerConfig
  private readonly db: Db
  private readonly counted: PartnerCounters | undefined
  private readonly concurrency: number

  constructor(
    private readonly options: WorkerOptions,
    private readonly timeoutMs: number,
  ) {
    this.db = options.db
    this.counted = options.metrics?.of(partnerMetrics)
    this.concurrency = options.concurrency ?? 8
  }

  keyOf(row: DeliveryRow): number {
    return row.seq
  }

  async claim(lease: {owner: string; until: string; now: string}, tried: readonly number[], filter: ProjectFilter, once: boolean): Promise<DeliveryRow[]> {
    // On PostgreSQL the claim locks the rows it picks and skips rows other workers hold, in a
    // READ COMMITTED transaction, so workers in several processes never wait on or fail over
    // each other's claims; each project's order holds because a row is only claimable once every
    // older row of its project has left `pending`.
    const query = {now: lease.now, projectIds: filter.projectIds, ignoreSchedule: once, exclude: [...tried]}
    // Most polls find nothing to send. Asking first with a read keeps an idle worker from
    // committing a write transaction (and taking SQLite's write lock) twice a second.
    if (!(await repo.anyClaimable(this.db, query))) return []
    return writeTransaction(
      this.db,
      async (trx) => {
        const rows = await repo.claimable(trx, {...query, limit: this.concurrency})
        await repo.lease(
          trx,
          rows.map((r) => r.seq),
          lease.owner,
          lease.until,
        )
        return rows
      },
      {isolation: 'read committed'},
    )
  }

  /** One push; a partner that is gone, expired or lacks its URL and credentials is given up at once. */
  async send(row: DeliveryRow): Promise<Outcome> {
    const client = await findClient(narrow(this.db), row.client_id)
    if (!client || !hasGrant(client, 'partner') || !client.partner_url || !client.partner_username || !client.partner_password || client.expired_at !== null) {
      return {ok: false, permanent: true, error: `partner client ${row.client_id} is gone, expired or has no partner URL and credentials`}
    }
    const {keys, clock, transport} = this.options
    const stored = await repo.deliveryBody(this.db, row.seq)
    const body = stored ?? ''
    const headers: Record<string, string> = {
      authorization: basicAuthorization(client.partner_username, unseal(keys, client.partner_password)),
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': USER_AGENT,
      'x-medpanel-delivery': row.id,
    }
    // The CLI run or request that queued the change: the partner can log it beside its own lines.
    if (row.request_id) headers['x-request-id'] = row.request_id
    // Signed at each attempt, so the time is this attempt's; webhook-id is the delivery id, the same on every retry.
    if (client.signing_secret) Object.assign(headers, signatureHeaders(unseal(keys, client.signing_secret), row.id, Math.floor(clock.now().getTime() / 1000), body))
    const url = client.partner_url.replace(/\/+$/, '') + row.path
    try {
      // Only the status and the start of an error text matter: the rest of an answer is never read.
      const response = await transport.send({method: row.method, url, headers, body: stored ?? undefined}, this.timeoutMs, {
        maxBodyBytes: partnerConfig.responseBodyLimitBytes,
      })
      const ok = response.status >= 200 && response.status < 300
      // The partner's words are stored and later printed: escaped here, before either.
      return ok
        ? {ok, status: response.status}
        : {ok, status: response.status, error: `HTTP ${response.status}${response.body ? `: ${printable(response.body.replace(/[ \t\r\n]+/g, ' ').slice(0, 200))}` : ''}`}
    } catch (error) {
      const failure = networkFailure(error)
      const reason = failure.timeout ? `timed out after ${this.timeoutMs / 1000} s` : failure.reason
      // A refused target (its name now leads to a link-local address) is retried like any
      // failure: list-deliveries shows why, and the row goes once DNS points somewhere sound.
      return {ok: false, error: error instanceof RefusedTarget ? reason : `network error: ${reason}`}
    }
  }

  update(row: DeliveryRow, change: Parameters<Outbox<DeliveryRow, number, ProjectFilter>['update']>[1]): Promise<void> {
    return repo.updateDelivery(this.db, row.seq, change)
  }

  async leased(): Promise<{key: number; owner: string | null}[]> {
    return (await repo.leasedRows(this.db)).map((row) => ({key: row.seq, owner: row.lease_owner}))
  }

  release(keys: number[]): Promise<void> {
    return repo.releaseLeases(this.db, keys)
  }

  nextDue(now: string): Promise<string | undefined> {
    return repo.nextDue(this.db, now)
  }

  async othersSending(owner: string, now: string, filter: ProjectFilter): Promise<boolean> {
    return (await repo.leasedRows(this.db)).some(
      (row) => row.lease_owner !== owner && row.lease_until !== null && row.lease_until >= now && (!filter.projectIds || filter.projectIds.includes(row.project_id)),
    )
  }

  attempted(row: DeliveryRow, outcome: Outcome, settled: Settled, logger: Logger): void {
    if (outcome.permanent) {
      this.counted?.attempts.undeliverable.inc()
      return
    }
    // A retry is counted as the attempt is recorded, before the attempt's outcome.
    if (settled === 'pending') this.counted?.retriesScheduled.inc()
    this.counted?.attempts[outcome.ok ? 'delivered' : outcome.status === undefined ? 'network_error' : 'failed'].inc()
    logger.log(
      outcome.ok ? 'info' : settled === 'failed' ? 'error' : 'warn',
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
        outcome: settled,
        status: outcome.status ?? null,
        error: outcome.error,
      },
    )
    this.options.onAttempt?.(row, outcome.ok)
  }
}
