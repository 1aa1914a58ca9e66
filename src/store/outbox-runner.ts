import {hostname} from 'node:os'
import {iso, type Clock} from '../lib/clock.js'
import {randomToken} from '../lib/ids.js'
import {createLogger, type LogFormat, type Logger} from '../lib/log.js'
import {retryDelay, type RetrySchedule} from '../lib/retry-schedule.js'
import {storeFailure} from './failure.js'

/**
 * The one runner behind every durable outbox (partner pushes, back-channel logout tokens): rows
 * written in the same transaction as the change they announce, then sent in the background by
 * whichever `serve` leases them first. The runner owns what every outbox needs and no outbox may
 * get wrong on its own:
 *
 * - the lease: a claimed row is reserved to this runner's `owner` (host:pid:random) until
 *   `leaseMs` from the claim, so no other process sends it at the same time;
 * - the dead-lease release: before each drain, rows leased by a process of this host that no
 *   longer exists (killed mid-send), and this runner's own leases on rows it no longer holds (an
 *   outcome the store refused to record), are freed and sent again now, not when the lease ends;
 * - the record: an attempt's outcome, with the next attempt on the outbox's retry schedule, or
 *   `failed` once the schedule gives up; a store that cannot be reached right now (a database
 *   restart, a failover) is asked again until the lease nearly ends, so a send that reached its
 *   receiver is recorded rather than made a second time;
 * - the loop: drain, then sleep until the next row is due (or the poll interval passes); a stop
 *   lets the sends in flight finish and be recorded and claims nothing more.
 *
 * Each outbox supplies only what it sends and how its table is read: `Outbox` below.
 */

/** The columns every outbox table has for its retries. */
export interface OutboxRow {
  attempts: number
  first_attempt_at: string | null
  next_attempt_at: string
}

/** What one send came to; `permanent` gives up at once (the receiver is gone). */
export interface Outcome {
  ok: boolean
  status?: number
  error?: string
  permanent?: boolean
}

/** A row's status once an attempt is recorded; `pending` is tried again later. */
export type Settled = 'delivered' | 'pending' | 'failed'

/** What an attempt's record writes to its row. */
export interface OutboxChange {
  status: Settled
  attempts: number
  first_attempt_at: string
  next_attempt_at?: string
  last_status: number | null
  last_error: string | null
  lease_owner: null
  lease_until: null
  updated_at: string
  delivered_at?: string
}

/** A row as the dead-lease release reads it. */
export interface LeasedRow<Key> {
  key: Key
  owner: string | null
}

/** One outbox: its table and what it sends. `Filter` narrows a drain (the partner outbox's projects). */
export interface Outbox<Row extends OutboxRow, Key, Filter> {
  /** Its name in the log: `delivery worker`, `logout worker`. */
  readonly name: string
  /** The interface whose log lines these are (A, B, …). */
  readonly interfaceName: string
  /** How long a claimed row stays reserved for its sender: longer than one send can take. */
  readonly leaseMs: number
  readonly schedule: RetrySchedule
  keyOf(row: Row): Key
  /**
   * Leases to `owner` until `until` the rows due now (all pending ones of the filter with `once`),
   * leaving out `tried`, as many as are sent side by side; answers the rows leased.
   */
  claim(lease: {owner: string; until: string; now: string}, tried: readonly Key[], filter: Filter, once: boolean): Promise<Row[]>
  /** Sends one row; answers what happened (a thrown error is the runner's to log, as a failed round). */
  send(row: Row): Promise<Outcome>
  /** Writes an attempt's record to the row. */
  update(row: Row, change: OutboxChange): Promise<void>
  /** Pending rows that some runner leased. */
  leased(): Promise<LeasedRow<Key>[]>
  /** Clears the leases of these rows. */
  release(keys: Key[]): Promise<void>
  /** When the next row will be due, for the idle sleep; undefined sleeps the poll interval. */
  nextDue?(now: string): Promise<string | undefined>
  /**
   * Work each drain starts with, answering how much it did (the logout outbox ends the sessions a
   * member's change voided, which queues their logouts).
   */
  prepare?(now: Date): Promise<number>
  /** Whether another process is sending rows of `filter` now (a `once` drain then waits for it). */
  othersSending?(owner: string, now: string, filter: Filter): Promise<boolean>
  /** Told of each recorded attempt: counters and the log line. */
  attempted(row: Row, outcome: Outcome, settled: Settled, logger: Logger): void
}

export interface RunnerOptions {
  clock: Clock
  log?: ((line: string) => void) | undefined
  /** The shape of those lines (serve --log-format); text unless told. */
  logFormat?: LogFormat | undefined
  /** The longest one send may take: the record is retried only while the lease outlasts it. */
  timeoutMs: number
  /** Between a store's failed record and the next try: doubling from `first` up to `most`. */
  recordRetryMs?: {first: number; most: number}
}

/** What one drain did. */
export interface DrainCount {
  /** What the outbox's `prepare` step did (sessions ended, for the logout outbox). */
  prepared: number
  attempted: number
  delivered: number
  failedAttempts: number
}

const RECORD_RETRY_MS = {first: 100, most: 2000}

export class OutboxRunner<Row extends OutboxRow, Key, Filter> {
  readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`
  readonly logger: Logger
  private running = false
  private stopping = false
  /** Rows this runner has claimed and not yet recorded (see releaseDeadLeases). */
  private readonly holding = new Set<Key>()
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined

  constructor(
    private readonly outbox: Outbox<Row, Key, Filter>,
    private readonly options: RunnerOptions,
  ) {
    this.logger = createLogger(options.log ?? (() => {}), options.logFormat)
  }

  /**
   * Sends what is due, round after round until nothing more can go. With `once`, every pending
   * row of the filter is sent now, ignoring its backoff, each at most once in this drain.
   */
  async drain(filter: Filter, once = false): Promise<DrainCount> {
    const {clock} = this.options
    await this.releaseDeadLeases()
    const prepared = (await this.outbox.prepare?.(clock.now())) ?? 0
    const count: DrainCount = {prepared, attempted: 0, delivered: 0, failedAttempts: 0}
    const tried: Key[] = []
    const giveUpAt = clock.now().getTime() + this.outbox.leaseMs
    let lookedAgain = false
    for (;;) {
      const rows = await this.claim(tried, filter, once)
      if (rows.length === 0) {
        if (!once || clock.now().getTime() >= giveUpAt) return count
        // A drain of everything pending whose rows another process is sending waits for that
        // send to finish rather than report its own rows as stuck behind it.
        if (await this.outbox.othersSending?.(this.owner, iso(clock.now()), filter)) {
          await pause(50)
          lookedAgain = false
          continue
        }
        // The other sender may have finished between the empty claim and that check, leaving
        // rows claimable: claim once more before stopping.
        if (lookedAgain) return count
        lookedAgain = true
        continue
      }
      lookedAgain = false
      const outcomes = await Promise.all(rows.map((row) => this.attempt(row)))
      for (const [i, ok] of outcomes.entries()) {
        tried.push(this.outbox.keyOf(rows[i]!))
        count.attempted++
        if (ok) count.delivered++
        else count.failedAttempts++
      }
      if (!once) tried.length = 0
      if (this.stopping) return count
    }
  }

  /** Runs in the background: drains, then sleeps until the next row is due or `pollMs` passes. */
  start(filter: Filter, pollMs: number): void {
    if (this.running) return
    this.running = true
    this.loop = (async () => {
      while (this.running) {
        await this.drain(filter).catch((error: Error) =>
          this.logger.log('error', `${this.outbox.name}: ${error.message}`, `${this.outbox.name} failed`, {interface: this.outbox.interfaceName, error: error.message}),
        )
        if (!this.running) break
        await this.sleep(pollMs)
      }
    })()
  }

  /** Whether a send is in flight now (a row claimed and its outcome not yet recorded). */
  delivering(): boolean {
    return this.holding.size > 0
  }

  /** Stops claiming rows and waits for the sends in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.running = false
    this.stopping = true
    this.wake?.()
    await this.loop
  }

  private async sleep(pollMs: number): Promise<void> {
    const {clock} = this.options
    const due = await this.outbox.nextDue?.(iso(clock.now())).catch(() => undefined)
    const untilDue = due ? Date.parse(due) - clock.now().getTime() : pollMs
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(20, Math.min(pollMs, untilDue)))
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
    this.wake = undefined
  }

  private claim(tried: readonly Key[], filter: Filter, once: boolean): Promise<Row[]> {
    const now = this.options.clock.now()
    const until = iso(new Date(now.getTime() + this.outbox.leaseMs))
    return this.outbox.claim({owner: this.owner, until, now: iso(now)}, tried, filter, once)
  }

  /** One attempt, its row held by this runner until its outcome is recorded. */
  private async attempt(row: Row): Promise<boolean> {
    const key = this.outbox.keyOf(row)
    this.holding.add(key)
    try {
      const outcome = await this.outbox.send(row)
      const settled = await this.finish(row, outcome)
      this.outbox.attempted(row, outcome, settled, this.logger)
      return outcome.ok
    } finally {
      this.holding.delete(key)
    }
  }

  /** Records an attempt, asking a store that cannot be reached again while the lease lasts. */
  private async finish(row: Row, outcome: Outcome): Promise<Settled> {
    const leaseEnds = Date.now() + this.outbox.leaseMs - this.options.timeoutMs
    const {first, most} = this.options.recordRetryMs ?? RECORD_RETRY_MS
    for (let wait = first; ; wait = Math.min(wait * 2, most)) {
      try {
        return await this.record(row, outcome)
      } catch (error) {
        if (storeFailure(error) === undefined || this.stopping || Date.now() + wait >= leaseEnds) throw error
        await pause(wait)
      }
    }
  }

  private async record(row: Row, outcome: Outcome): Promise<Settled> {
    const now = this.options.clock.now()
    const stamp = iso(now)
    const attempts = row.attempts + 1
    const firstAttemptAt = row.first_attempt_at ?? stamp
    const common = {attempts, first_attempt_at: firstAttemptAt, last_status: outcome.status ?? null, lease_owner: null, lease_until: null, updated_at: stamp}
    if (outcome.ok) {
      await this.outbox.update(row, {...common, status: 'delivered', delivered_at: stamp, last_error: null})
      return 'delivered'
    }
    const delay = outcome.permanent ? null : retryDelay(this.outbox.schedule, attempts, new Date(firstAttemptAt), now)
    const next = delay === null ? row.next_attempt_at : iso(new Date(now.getTime() + delay * 1000))
    const status = delay === null ? 'failed' : 'pending'
    await this.outbox.update(row, {...common, status, next_attempt_at: next, last_error: outcome.error ?? 'failed'})
    return status
  }

  /**
   * Frees rows leased by a process of this host that no longer exists, and this runner's own
   * leases on rows it no longer holds (an outcome the store could not record).
   */
  private async releaseDeadLeases(): Promise<void> {
    const host = hostname()
    const dead: Key[] = []
    for (const {key, owner} of await this.outbox.leased()) {
      if (owner === this.owner) {
        if (!this.holding.has(key)) dead.push(key)
        continue
      }
      const [ownerHost, pid] = (owner ?? '').split(':')
      if (ownerHost === host && !isAlive(Number(pid))) dead.push(key)
    }
    if (dead.length) await this.outbox.release(dead)
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

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
