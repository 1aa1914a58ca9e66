import {hostname} from 'node:os'
import {narrow} from '../../store/database.js'
import type {StoreParts} from '../../store/database.js'
import {signonConfig} from './config.js'
import {networkFailure, type Transport} from '../../http/outbound.js'
import {iso, type Clock} from '../../lib/clock.js'
import {randomToken} from '../../lib/ids.js'
import {createLogger, type LogFormat, type Logger} from '../../lib/log.js'
import {printable} from '../../lib/printable.js'
import {retryDelay} from '../../lib/retry-schedule.js'
import {MEDPANEL_VERSION} from '../../version.js'
import {findClient} from '../../registry/repository.js'
import type {Metrics} from '../../metrics/metrics.js'
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
 * Sends the back-channel logout outbox: each round ends the sessions a member's change voided
 * (backchannel-logout.ts, endVoidedSessions), then leases the due deliveries so no other `serve`
 * sends them at once, posts each client its logout token, and records the outcome; a failure is
 * tried again on signonConfig.backchannelLogout's schedule. Each attempt signs a new token with
 * the same jti, so a client that got an earlier one can drop the duplicate.
 */
export class LogoutWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`
  private readonly logger: Logger
  private readonly timeoutMs: number
  private running = false
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined

  constructor(private readonly options: LogoutWorkerOptions) {
    this.logger = createLogger(options.log ?? (() => {}), options.logFormat)
    this.timeoutMs = options.timeoutMs ?? SETTINGS.requestTimeoutMs
  }

  /** Sends everything due now, each delivery at most once. */
  async drain(): Promise<LogoutDrainResult> {
    const {db, clock} = this.options
    const result: LogoutDrainResult = {endedSessions: await endVoidedSessions(db, clock.now()), attempted: 0, delivered: 0}
    const tried = new Set<string>()
    for (;;) {
      const rows = await this.claim(tried)
      if (rows.length === 0) return result
      const outcomes = await Promise.all(rows.map((row) => this.deliver(row)))
      result.attempted += rows.length
      result.delivered += outcomes.filter(Boolean).length
    }
  }

  /** Runs in the background: drains, then waits `pollMs` (or until stopped). */
  start(pollMs: number = SETTINGS.pollMs): void {
    if (this.running) return
    this.running = true
    this.loop = (async () => {
      while (this.running) {
        await this.drain().catch((error: Error) => this.logger.log('error', `logout worker: ${error.message}`, 'logout worker failed', {interface: 'A', error: error.message}))
        if (!this.running) break
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs)
          this.wake = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
    })()
  }

  /** Stops, after the posts in flight are sent and recorded. */
  async stop(): Promise<void> {
    this.running = false
    this.wake?.()
    await this.loop
  }

  private async claim(tried: Set<string>): Promise<LogoutDeliveryRow[]> {
    const now = this.options.clock.now()
    const stamp = iso(now)
    const due = (await repo.dueDeliveries(this.options.db, stamp, 16)).filter((row) => !tried.has(row.id))
    const claimed: LogoutDeliveryRow[] = []
    for (const row of due) {
      tried.add(row.id)
      if (await repo.lease(this.options.db, row.id, this.owner, iso(new Date(now.getTime() + LEASE_MS)), stamp)) claimed.push(row)
    }
    return claimed
  }

  /** One attempt; true when the client answered 2xx (the spec's 200, or any success). */
  private async deliver(row: LogoutDeliveryRow): Promise<boolean> {
    const {db, clock, transport, issuer} = this.options
    const client = await findClient(narrow(db), row.client_id)
    if (!client?.backchannel_logout_uri || client.expired_at !== null) {
      await this.record(row, {ok: false, permanent: true, error: `client ${row.client_id} is gone, expired or has no back-channel logout URI`})
      this.options.metrics?.of(signonMetrics).logoutAttempts.undeliverable.inc()
      return false
    }
    const token = await issueLogoutToken(this.options, {
      issuer,
      clientId: client.id,
      alg: client.id_token_alg,
      sub: String(row.member_id),
      sid: row.sid === NO_SID ? null : row.sid,
      jti: row.id,
      now: clock.now(),
    })
    let outcome: {ok: boolean; status?: number; error?: string}
    try {
      const headers = {'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'user-agent': USER_AGENT}
      const body = new URLSearchParams({logout_token: token}).toString()
      const response = await transport.send({method: 'POST', url: client.backchannel_logout_uri, headers, body}, this.timeoutMs, {maxBodyBytes: 4096})
      const ok = response.status >= 200 && response.status < 300
      outcome = ok
        ? {ok, status: response.status}
        : {ok, status: response.status, error: `HTTP ${response.status}${response.body ? `: ${printable(response.body.slice(0, 200))}` : ''}`}
    } catch (error) {
      const failure = networkFailure(error)
      outcome = {ok: false, error: failure.timeout ? `timed out after ${this.timeoutMs / 1000} s` : `network error: ${failure.reason}`}
    }
    const status = await this.record(row, outcome)
    this.options.metrics?.of(signonMetrics).logoutAttempts[outcome.ok ? 'delivered' : outcome.status === undefined ? 'network_error' : 'failed'].inc()
    this.logger.log(
      outcome.ok ? 'info' : status === 'failed' ? 'error' : 'warn',
      `logout ${row.id} to ${row.client_id} -> ${outcome.ok ? `delivered (${outcome.status})` : outcome.error}`,
      'logout attempt',
      {interface: 'A', delivery_id: row.id, client_id: row.client_id, attempt: row.attempts + 1, outcome: status, status: outcome.status ?? null, error: outcome.error},
    )
    return outcome.ok
  }

  /** Records an attempt; answers the delivery's status after it (pending: tried again later). */
  private async record(row: LogoutDeliveryRow, outcome: {ok: boolean; status?: number; error?: string; permanent?: boolean}): Promise<'delivered' | 'pending' | 'failed'> {
    const now = this.options.clock.now()
    const stamp = iso(now)
    const attempts = row.attempts + 1
    const firstAttemptAt = row.first_attempt_at ?? stamp
    const common = {attempts, first_attempt_at: firstAttemptAt, last_status: outcome.status ?? null, lease_owner: null, lease_until: null, updated_at: stamp}
    if (outcome.ok) {
      await repo.updateDelivery(this.options.db, row.id, {...common, status: 'delivered', delivered_at: stamp, last_error: null})
      return 'delivered'
    }
    const delay = outcome.permanent ? null : retryDelay(SETTINGS, attempts, new Date(firstAttemptAt), now)
    const next = delay === null ? row.next_attempt_at : iso(new Date(now.getTime() + delay * 1000))
    await repo.updateDelivery(this.options.db, row.id, {...common, status: delay === null ? 'failed' : 'pending', next_attempt_at: next, last_error: outcome.error ?? 'failed'})
    return delay === null ? 'failed' : 'pending'
  }
}
