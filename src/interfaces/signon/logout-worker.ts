import {narrow} from '../../store/database.js'
import type {StoreParts} from '../../store/database.js'
import {signonConfig} from './config.js'
import {networkFailure, type Transport} from '../../http/outbound.js'
import type {Clock} from '../../lib/clock.js'
import type {LogFormat, Logger} from '../../lib/log.js'
import {printable} from '../../lib/printable.js'
import {MEDPANEL_VERSION} from '../../version.js'
import {findClient} from '../../registry/repository.js'
import type {Metrics} from '../../metrics/metrics.js'
import {OutboxRunner, type Outbox, type OutboxChange, type Outcome, type Settled} from '../../store/outbox-runner.js'
import type {Kysely} from 'kysely'
import type {SignonView as Database} from './tables.js'
import {endVoidedSessions, NO_SID} from './backchannel-logout.js'
import * as repo from './logout-repository.js'
import {issueLogoutToken} from './oidc.js'
import type {LogoutDeliveryRow} from './tables.js'
import {signonMetrics} from './metrics.js'

const SETTINGS = signonConfig.backchannelLogout
/** How long a claimed delivery stays reserved for its sender: the request timeout and then some. */
const LEASE_MS = SETTINGS.requestTimeoutMs * 3
const USER_AGENT = `medpanel-logout/${MEDPANEL_VERSION}`
/** Deliveries leased and sent side by side in one round. */
const ROUND = 16

/** The store's parts (the keys sign the logout tokens), and how to send. */
export interface LogoutWorkerOptions extends StoreParts<Kysely<Database>> {
  clock: Clock
  transport: Transport
  /** The issuer the logout tokens name: the service's base URL, as its ID tokens do. */
  issuer: string
  timeoutMs?: number
  log?: (line: string) => void
  logFormat?: LogFormat
  /** The serving app's registry, where the posts' outcomes are counted; none in an operator's command. */
  metrics?: Metrics | undefined
}

/** What one drain did. */
export interface LogoutDrainResult {
  /** Sessions a member's change had voided, ended now (their logouts queued). */
  endedSessions: number
  attempted: number
  delivered: number
}

/**
 * Sends the back-channel logout outbox through the store's outbox runner (lease, record, retry on
 * signonConfig.backchannelLogout's schedule, dead-lease release: src/store/outbox-runner.ts). Each
 * drain first ends the sessions a member's change voided (backchannel-logout.ts,
 * endVoidedSessions), which queues their logouts; each attempt signs a new logout token with the
 * same jti, so a client that got an earlier one can drop the duplicate.
 */
export class LogoutWorker {
  private readonly runner: OutboxRunner<LogoutDeliveryRow, string, undefined>

  constructor(options: LogoutWorkerOptions) {
    const timeoutMs = options.timeoutMs ?? SETTINGS.requestTimeoutMs
    this.runner = new OutboxRunner(new LogoutOutbox(options, timeoutMs), {clock: options.clock, log: options.log, logFormat: options.logFormat, timeoutMs})
  }

  /** This worker's name on the rows it leases (host:pid:random). */
  get owner(): string {
    return this.runner.owner
  }

  /** Sends everything due now, each delivery at most once. */
  async drain(): Promise<LogoutDrainResult> {
    const {prepared, attempted, delivered} = await this.runner.drain(undefined, false)
    return {endedSessions: prepared, attempted, delivered}
  }

  /** Runs in the background: drains, then waits `pollMs` (or until stopped). */
  start(pollMs: number = SETTINGS.pollMs): void {
    this.runner.start(undefined, pollMs)
  }

  /** Stops, after the posts in flight are sent and recorded. */
  stop(): Promise<void> {
    return this.runner.stop()
  }
}

/** The logout_deliveries table and what a logout post sends. */
class LogoutOutbox implements Outbox<LogoutDeliveryRow, string, undefined> {
  readonly name = 'logout worker'
  readonly interfaceName = 'A'
  readonly leaseMs = LEASE_MS
  readonly schedule = SETTINGS

  constructor(
    private readonly options: LogoutWorkerOptions,
    private readonly timeoutMs: number,
  ) {}

  keyOf(row: LogoutDeliveryRow): string {
    return row.id
  }

  prepare(now: Date): Promise<number> {
    return endVoidedSessions(this.options.db, now)
  }

  /** The due deliveries, each leased on its own: one another worker took first is skipped. */
  async claim(lease: {owner: string; until: string; now: string}, tried: readonly string[]): Promise<LogoutDeliveryRow[]> {
    const {db} = this.options
    const due = (await repo.dueDeliveries(db, lease.now, ROUND + tried.length)).filter((row) => !tried.includes(row.id)).slice(0, ROUND)
    const claimed: LogoutDeliveryRow[] = []
    for (const row of due) {
      if (await repo.lease(db, row.id, lease.owner, lease.until, lease.now)) claimed.push(row)
    }
    return claimed
  }

  /** One post of a fresh logout token; a client that is gone, expired or has no logout URI is given up at once. */
  async send(row: LogoutDeliveryRow): Promise<Outcome> {
    const {db, clock, transport, issuer} = this.options
    const client = await findClient(narrow(db), row.client_id)
    if (!client?.backchannel_logout_uri || client.expired_at !== null) {
      return {ok: false, permanent: true, error: `client ${row.client_id} is gone, expired or has no back-channel logout URI`}
    }
    const sid = row.sid === NO_SID ? null : row.sid
    const token = await issueLogoutToken(this.options, {issuer, clientId: client.id, alg: client.id_token_alg, sub: String(row.member_id), sid, jti: row.id, now: clock.now()})
    try {
      const headers = {'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': USER_AGENT}
      const body = new URLSearchParams({logout_token: token}).toString()
      const response = await transport.send({method: 'POST', url: client.backchannel_logout_uri, headers, body}, this.timeoutMs, {maxBodyBytes: 4096})
      const ok = response.status >= 200 && response.status < 300
      return ok
        ? {ok, status: response.status}
        : {ok, status: response.status, error: `HTTP ${response.status}${response.body ? `: ${printable(response.body.slice(0, 200))}` : ''}`}
    } catch (error) {
      const failure = networkFailure(error)
      return {ok: false, error: failure.timeout ? `timed out after ${this.timeoutMs / 1000} s` : `network error: ${failure.reason}`}
    }
  }

  update(row: LogoutDeliveryRow, change: OutboxChange): Promise<void> {
    return repo.updateDelivery(this.options.db, row.id, change)
  }

  async leased(): Promise<{key: string; owner: string | null}[]> {
    return (await repo.leasedRows(this.options.db)).map((row) => ({key: row.id, owner: row.lease_owner}))
  }

  release(keys: string[]): Promise<void> {
    return repo.releaseLeases(this.options.db, keys)
  }

  attempted(row: LogoutDeliveryRow, outcome: Outcome, settled: Settled, logger: Logger): void {
    const counted = this.options.metrics?.of(signonMetrics).logoutAttempts
    if (outcome.permanent) {
      counted?.undeliverable.inc()
      return
    }
    counted?.[outcome.ok ? 'delivered' : outcome.status === undefined ? 'network_error' : 'failed'].inc()
    logger.log(
      outcome.ok ? 'info' : settled === 'failed' ? 'error' : 'warn',
      `logout ${row.id} to ${row.client_id} -> ${outcome.ok ? `delivered (${outcome.status})` : outcome.error}`,
      'logout attempt',
      {interface: 'A', delivery_id: row.id, client_id: row.client_id, attempt: row.attempts + 1, outcome: settled, status: outcome.status ?? null, error: outcome.error},
    )
  }
}
