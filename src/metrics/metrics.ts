import {collectDefaultMetrics, Counter, Gauge, Histogram, Registry} from 'prom-client'
import {config} from '../config.js'

/**
 * The service's Prometheus metrics (GET /metrics, docs/operations.md "Metrics"), on prom-client.
 *
 * One `Metrics` per store handle an app serves (src/instrument.ts makes it and binds it to the
 * store, where the layers that have only the store find it: see `metricsOf` in
 * store/context.ts). `serve` has one store, so one per process; every test's fresh store gets its
 * own, so tests read their own counters however many apps vitest runs in one process. The
 * process's own metrics (CPU, memory, event-loop lag, GC) exist once per process, in a registry of
 * their own, and every app's /metrics shows them too.
 *
 * A label takes only values from a closed list (below) or from the code (route templates, partner
 * client ids), never from a request: no caller can make series up. Every bounded combination is
 * made at 0 from the start, so a dashboard sees a counter before it first moves.
 */

export const METRICS_PREFIX = 'medpanel_'

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'operator'] as const
export type GrantType = (typeof GRANT_TYPES)[number]
export const SIGNIN_OUTCOMES = ['success', 'failure'] as const
export type SigninOutcome = (typeof SIGNIN_OUTCOMES)[number]
/**
 * One attempt of the delivery worker: the partner answered 2xx (`delivered`) or something else
 * (`failed`), no answer came (`network_error`: refused, reset, timed out, a refused target), or
 * nothing could be sent (`undeliverable`: the partner client is gone, expired or lacks its URL).
 */
export const DELIVERY_OUTCOMES = ['delivered', 'failed', 'network_error', 'undeliverable'] as const
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number]
/** Why interface C refused a withdrawal (interfaces/balance/service.ts names each refusal). */
export const REFUSAL_REASONS = [
  'invalid',
  'unknown_account',
  'inactive_member',
  'unknown_type',
  'restricted',
  'below_minimum',
  'insufficient_funds',
  'idempotency_conflict',
] as const
export type RefusalReason = (typeof REFUSAL_REASONS)[number]
export const SEARCH_KINDS = ['summary', 'data'] as const
export type SearchKind = (typeof SEARCH_KINDS)[number]
/**
 * How an interface E call that reached its search ended: answered (`ok`), its query refused (400,
 * `invalid`), its key refused (402/403, `refused`), a per-key limit (429, `throttled`), no room for
 * it (503 with the search queue full or the store closing, `busy`), its time budget (503,
 * `timeout`), or anything else (`failed`).
 */
export const SEARCH_OUTCOMES = ['ok', 'invalid', 'refused', 'throttled', 'busy', 'timeout', 'failed'] as const
export type SearchOutcome = (typeof SEARCH_OUTCOMES)[number]
/** The guessing limits' kinds of secret (registry/throttle.ts); never a member, client or address. */
export const CREDENTIALS = ['password', 'client_secret', 'api_key'] as const
export type Credential = (typeof CREDENTIALS)[number]

/** Pending outbox rows of one partner client, for the outbox gauges. */
export interface OutboxBacklog {
  partner: string
  depth: number
  /** Seconds since the oldest pending row was queued; 0 when none is pending. */
  oldestAgeSeconds: number
}

export interface PoolCounts {
  total: number
  idle: number
  waiting: number
  /** The most connections the pool opens. */
  max?: number
}

/** What the gauges read when they are scraped (src/instrument.ts gives them the store's answers). */
export interface MetricSources {
  activeSessions(): Promise<number>
  /** Every partner client, those with nothing pending at 0. */
  outbox(): Promise<OutboxBacklog[]>
  searchThreadsBusy(): number
  /** This process's password hashes: running, and waiting for a slot (registry/hash-queue.ts). */
  passwordHashes(): {running: number; waiting: number}
  migrationsApplied(): Promise<number>
  /** SQLite stores: the size of the write-ahead log beside the store file (0 for an in-memory store). */
  sqliteWalBytes?: () => number
  /** PostgreSQL stores: this process's connection pool. */
  pgPool?: () => PoolCounts
  /** PostgreSQL stores: whether this process's caches are on (its listener hears the store's changes). */
  pgCachesListening?: () => boolean
}

type Child = {inc(value?: number): void}

/**
 * The interface a route belongs to, as the HTTP metrics label it: an interface's letter (its
 * `label` in src/app.ts's SERVED_INTERFACES), or `other` for the service's own paths.
 */
export type InterfaceLabel = string

/**
 * One route's answers, in plain numbers: the HTTP middleware runs on every request of the hottest
 * routes, so all it does is add to these (no label object, no string, no allocation; prom-client's
 * own children hash their labels on every call, several times the cost). prom-client renders them
 * when /metrics is scraped (`preAggregated`).
 */
export class RouteSeries {
  /** Answers by status class: [2] counts the 2xx. */
  readonly byClass: number[] = new Array(10).fill(0)
  /** Durations per bucket of `bounds`, not cumulative; the last slot is past the largest bound. */
  readonly buckets: number[]
  sum = 0
  count = 0

  constructor(
    readonly iface: InterfaceLabel,
    readonly route: string,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Array(bounds.length + 1).fill(0)
  }

  record(status: number, seconds: number): void {
    const statusClass = (status / 100) | 0
    this.byClass[statusClass >= 1 && statusClass <= 9 ? statusClass : 0]! += 1
    const bounds = this.bounds
    let i = 0
    while (i < bounds.length && seconds > bounds[i]!) i++
    this.buckets[i]! += 1
    this.sum += seconds
    this.count += 1
  }
}

interface Sample {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

/**
 * A metric whose values are kept elsewhere and read when scraped, registered as prom-client
 * registers its own aggregated metrics (AggregatorRegistry.aggregate): an object with `get()`.
 * prom-client still writes the exposition (names, labels, escaping).
 */
function preAggregated(registry: Registry, metric: {name: string; help: string; type: 'counter' | 'histogram'; values: () => Sample[]}): void {
  const {name, help, type, values} = metric
  const object = {name, help, type, aggregator: 'sum' as const, get: async () => ({name, help, type, aggregator: 'sum' as const, values: values()})}
  registry.registerMetric(object as unknown as Counter<string>)
}

/** A counter's child for every value of its one label, each made at 0. */
function children<V extends string>(counter: Counter<string>, values: readonly V[]): Record<V, Child> {
  const out = {} as Record<V, Child>
  for (const value of values) {
    const child = counter.labels(value)
    child.inc(0)
    out[value] = child
  }
  return out
}

/** A gauge read from the store at scrape time; a failed read leaves it without samples for that scrape. */
function scraped<T extends string>(
  options: {name: string; help: string; labelNames?: readonly T[]; registers: Registry[]},
  read: (gauge: Gauge<T>) => Promise<void> | void,
): Gauge<T> {
  return new Gauge<T>({
    ...options,
    async collect() {
      try {
        await read(this)
      } catch {
        this.reset()
      }
    },
  })
}

let processRegistry: Registry | undefined

/** The process's own metrics, made once per process (their event-loop monitor and GC observer are per process too). */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({register: processRegistry, prefix: METRICS_PREFIX})
    // prom-client also sums the active handles, requests and resources into gauges named `_total`,
    // which Prometheus reserves for counters (promtool check metrics flags them). The per-type
    // gauges without the suffix carry the same numbers, so the sums go.
    for (const kind of ['handles', 'requests', 'resources']) processRegistry.removeSingleMetric(`${METRICS_PREFIX}nodejs_active_${kind}_total`)
  }
  return processRegistry
}

export class Metrics {
  /** What /metrics renders: this store's metrics and the process's. */
  readonly registry: Registry
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE

  /** Every route's series (RouteSeries), by route template. */
  private readonly routes = new Map<string, RouteSeries>()
  readonly signon: {
    codesIssued: Child
    tokensIssued: Record<GrantType, Child>
    tokensRevoked: Record<GrantType, Child>
    signins: Record<SigninOutcome, Child>
    /** The logout worker's posts, with the delivery worker's outcomes (the client for the partner). */
    logoutAttempts: Record<DeliveryOutcome, Child>
  }
  readonly partner: {attempts: Record<DeliveryOutcome, Child>; retriesScheduled: Child}
  readonly balance: {created: Child; refused: Record<RefusalReason, Child>; replays: Child}
  readonly search: {
    requests: Record<SearchKind, Record<SearchOutcome, Child>>
    queueWait: Histogram<string>
    duration: Histogram<string>
    truncated: Child
    dataCalls: Child
  }
  readonly guessing: Record<Credential, Child>
  readonly store: {batchSize: Histogram<string>; commitDuration: Histogram<string>}

  constructor(sources: MetricSources) {
    const own = new Registry()
    const registers = [own]
    const name = (rest: string) => `${METRICS_PREFIX}${rest}`
    const counter = <T extends string>(rest: string, help: string, labelNames: readonly T[] = []) => new Counter<T>({name: name(rest), help, labelNames, registers})
    const histogram = <T extends string>(rest: string, help: string, buckets: readonly number[], labelNames: readonly T[] = []) =>
      new Histogram<T>({name: name(rest), help, buckets: [...buckets], labelNames, registers})
    const single = (rest: string, help: string): Child => {
      const made = counter(rest, help)
      made.inc(0)
      return made
    }

    const routes = this.routes
    preAggregated(own, {
      name: name('http_requests_total'),
      help: 'HTTP requests answered, by interface (A, C, D, E or other), route template and status class',
      type: 'counter',
      values: () =>
        [...routes.values()].flatMap((series) =>
          series.byClass.flatMap((value, statusClass) => (value > 0 ? [{labels: {interface: series.iface, route: series.route, status_class: `${statusClass}xx`}, value}] : [])),
        ),
    })
    const durationName = name('http_request_duration_seconds')
    const bounds = config.metrics.httpSecondsBuckets
    preAggregated(own, {
      name: durationName,
      help: 'Time from a request reaching the app to its answer being ready (a streamed body is not waited for)',
      type: 'histogram',
      values: () =>
        [...routes.values()].flatMap((series) => {
          const labels = {interface: series.iface, route: series.route}
          let cumulative = 0
          const buckets = bounds.map((le, i) => {
            cumulative += series.buckets[i]!
            return {labels: {...labels, le}, value: cumulative, metricName: `${durationName}_bucket`}
          })
          return [
            ...buckets,
            {labels: {...labels, le: '+Inf'}, value: series.count, metricName: `${durationName}_bucket`},
            {labels, value: series.sum, metricName: `${durationName}_sum`},
            {labels, value: series.count, metricName: `${durationName}_count`},
          ]
        }),
    })

    this.signon = {
      codesIssued: single('signon_codes_issued_total', 'Authorization codes issued (a member allowed a client, on the consent page or by prompt=none)'),
      tokensIssued: children(counter('signon_tokens_issued_total', 'Access tokens issued, by grant type (operator: issue-token)', ['grant_type']), GRANT_TYPES),
      tokensRevoked: children(
        counter(
          'signon_tokens_revoked_total',
          'Access tokens revoked (RFC 7009, a taken-back consent, a reused code, a member or client change), by the grant type they came from',
          ['grant_type'],
        ),
        GRANT_TYPES,
      ),
      signins: children(
        counter('signon_signins_total', 'Sign-ins on the consent page, by outcome (failure: wrong e-mail or password, inactive member, or refused by the guessing limits)', [
          'outcome',
        ]),
        SIGNIN_OUTCOMES,
      ),
      logoutAttempts: children(
        counter('signon_backchannel_logout_attempts_total', 'Logout tokens posted to clients (back-channel logout) by the logout worker, by outcome', ['outcome']),
        DELIVERY_OUTCOMES,
      ),
    }
    scraped({name: name('signon_active_sessions'), help: 'Sign-in sessions that have neither ended nor expired, in the store', registers}, async (gauge) =>
      gauge.set(await sources.activeSessions()),
    )

    // Both outbox gauges come from one query per scrape: prom-client collects every metric at once.
    let outboxRead: Promise<OutboxBacklog[]> | undefined
    const outbox = () =>
      (outboxRead ??= sources.outbox().finally(() => {
        outboxRead = undefined
      }))
    scraped({name: name('partner_outbox_depth'), help: 'Deliveries waiting in the outbox, per partner client id', labelNames: ['partner'], registers}, async (gauge) => {
      const rows = await outbox()
      gauge.reset()
      for (const row of rows) gauge.set({partner: row.partner}, row.depth)
    })
    scraped(
      {name: name('partner_outbox_oldest_age_seconds'), help: "Age of the oldest delivery waiting in a partner's outbox (0 when none waits)", labelNames: ['partner'], registers},
      async (gauge) => {
        const rows = await outbox()
        gauge.reset()
        for (const row of rows) gauge.set({partner: row.partner}, row.oldestAgeSeconds)
      },
    )
    this.partner = {
      attempts: children(counter('partner_delivery_attempts_total', 'Delivery attempts of the outbox worker, by outcome', ['outcome']), DELIVERY_OUTCOMES),
      retriesScheduled: single('partner_retries_scheduled_total', 'Failed attempts after which the delivery was scheduled again (the others gave up)'),
    }

    this.balance = {
      created: single('balance_withdrawals_created_total', 'Withdrawals created'),
      refused: children(counter('balance_withdrawals_refused_total', 'Withdrawal requests refused by the withdrawal rules, by reason', ['reason']), REFUSAL_REASONS),
      replays: single('balance_idempotent_replays_total', 'Withdrawal requests answered from an earlier one with the same Idempotency-Key'),
    }

    const searchRequests = counter('search_requests_total', 'Interface E calls past their API key check, by kind and outcome', ['kind', 'outcome'])
    const requests = {} as Record<SearchKind, Record<SearchOutcome, Child>>
    for (const kind of SEARCH_KINDS) {
      requests[kind] = {} as Record<SearchOutcome, Child>
      for (const outcome of SEARCH_OUTCOMES) {
        const child = searchRequests.labels(kind, outcome)
        child.inc(0)
        requests[kind][outcome] = child
      }
    }
    this.search = {
      requests,
      queueWait: histogram(
        'search_queue_wait_seconds',
        'Time a search waited for a search thread (0 where searches need none: in-memory and PostgreSQL stores)',
        config.metrics.searchSecondsBuckets,
      ),
      duration: histogram(
        'search_duration_seconds',
        "Time a search ran, from getting its thread to its answer (a data answer's counts; its pages stream after)",
        config.metrics.searchSecondsBuckets,
      ),
      truncated: single('search_truncated_total', 'Data answers cut short after they began: the reader went away or stalled, or a page failed or ran out of time'),
      dataCalls: single('search_data_calls_total', "Data calls that spent one of their key's allowance (a call given back after its search failed included)"),
    }
    scraped(
      {name: name('search_threads_busy'), help: 'Search threads holding a search, stopped ones still finishing included (0 on stores searched without threads)', registers},
      (gauge) => gauge.set(sources.searchThreadsBusy()),
    )

    scraped(
      {
        name: name('signon_password_hashes'),
        help: "This process's password hashes (sign-in checks): running, and waiting for one of serve --password-hashes' slots",
        labelNames: ['state'],
        registers,
      },
      (gauge) => {
        const {running, waiting} = sources.passwordHashes()
        gauge.set({state: 'running'}, running)
        gauge.set({state: 'waiting'}, waiting)
      },
    )

    this.guessing = children(
      counter('guessing_refusals_total', 'Requests refused 429 by the guessing limits, by the kind of secret guessed (password, client_secret, api_key)', ['credential']),
      CREDENTIALS,
    )

    this.store = {
      batchSize: histogram('store_commit_batch_size', 'Write transactions per commit (the group writer, on either store)', config.metrics.commitBatchBuckets),
      commitDuration: histogram('store_commit_duration_seconds', 'Time of one COMMIT with its sync to disk', config.metrics.commitSecondsBuckets),
    }
    const {sqliteWalBytes, pgPool, pgCachesListening} = sources
    this.pgPool = pgPool
    if (sqliteWalBytes) {
      scraped({name: name('store_sqlite_wal_bytes'), help: "Size of the SQLite store's write-ahead log file", registers}, (gauge) => gauge.set(sqliteWalBytes()))
    }
    if (pgPool) {
      scraped(
        {name: name('store_pg_pool_connections'), help: "This process's PostgreSQL connections: total, idle, and requests waiting for one", labelNames: ['state'], registers},
        (gauge) => {
          // As the scrape began: the scrape's own queries (outbox depth, sessions) would otherwise
          // wait for connections and count themselves as waiting.
          const counts = this.poolAtScrape ?? pgPool()
          gauge.set({state: 'total'}, counts.total)
          gauge.set({state: 'idle'}, counts.idle)
          gauge.set({state: 'waiting'}, counts.waiting)
        },
      )
    }
    if (pgCachesListening) {
      scraped(
        {
          name: name('store_pg_cache_listening'),
          help: "1 while this process's caches are on (its listener hears the store's changes), 0 while every lookup reads the database",
          registers,
        },
        (gauge) => gauge.set(pgCachesListening() ? 1 : 0),
      )
    }
    scraped({name: name('store_migrations_applied'), help: 'Store migrations recorded as applied', registers}, async (gauge) => gauge.set(await sources.migrationsApplied()))

    this.registry = Registry.merge([processMetrics(), own])
  }

  /** The series of one route template, made on its first answer and labelled with `label(template)`. */
  route(template: string, label: (template: string) => InterfaceLabel): RouteSeries {
    let series = this.routes.get(template)
    if (!series) {
      series = new RouteSeries(label(template), template, config.metrics.httpSecondsBuckets)
      this.routes.set(template, series)
    }
    return series
  }

  private readonly pgPool: MetricSources['pgPool']
  /** The PostgreSQL pool's counts taken as the current scrape began (render). */
  private poolAtScrape: {total: number; idle: number; waiting: number} | undefined

  /** The exposition text of every metric, as /metrics answers it. */
  render(): Promise<string> {
    this.poolAtScrape = this.pgPool?.()
    return this.registry.metrics()
  }
}
