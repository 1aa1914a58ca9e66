import {collectDefaultMetrics, Registry} from 'prom-client'
import {type InterfaceLabel, HTTP_SECONDS_BUCKETS, RouteSeries, registerHttpMetrics} from './http.js'
import {METRICS_PREFIX, type MetricKit, type MetricSet} from './define.js'
import {kitFor} from './kit.js'
import {type PoolCounts, registerStoreMetrics, type StoreMetrics, type StoreSources} from './store.js'

/**
 * The service's Prometheus metrics (GET /metrics, docs/operations.md "Metrics"), on prom-client.
 *
 * One `Metrics` per store handle an app serves (src/instrument.ts makes it). It is handed to
 * whatever counts: the routes get it in RouteDeps and pass it, or their part's set of it, to the
 * services they call; the workers get it in their options. No layer looks it up from the store.
 * `serve` has one store, so one per process; every test's fresh store gets its own, so tests
 * read their own counters however many apps vitest runs in one process. The
 * process's own metrics (CPU, memory, event-loop lag, GC) exist once per process, in a registry of
 * their own, and every app's /metrics shows them too.
 *
 * This module holds what every part shares: the registry, the HTTP metrics and the store's. Each
 * interface (and the grants and registry layers) declares its own in its folder with
 * `defineMetrics` (define.ts, which loads no prom-client), and reaches them with `of(set)`; this module names none of them.
 * Every bounded combination of labels is made at 0 from the start, so a dashboard sees a counter
 * before it first moves.
 */

export type {InterfaceLabel, MetricKit, MetricSet, PoolCounts, StoreMetrics, StoreSources}
export {type Child, type CountersOf, DELIVERY_OUTCOMES, type DeliveryOutcome, defineMetrics, METRICS_PREFIX} from './define.js'
export {RouteSeries} from './http.js'

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

export class Metrics<S = unknown> {
  /** What /metrics renders: this store's metrics and the process's. */
  readonly registry: Registry
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE
  readonly store: StoreMetrics

  /** Every route's series (RouteSeries), by route template. */
  private readonly routes = new Map<string, RouteSeries>()
  private readonly kit: MetricKit
  /** The built sets, by their slot. */
  private readonly built: unknown[] = []
  private readonly pgPool: StoreSources['pgPool']
  /** The PostgreSQL pool's counts taken as the current scrape began (render). */
  private poolAtScrape: PoolCounts | undefined

  /**
   * Registers the HTTP metrics, then each of `sets` in turn (with `scope`, what their gauges
   * read), then the store's: /metrics lists them in that order.
   */
  constructor(
    sources: StoreSources,
    sets: readonly MetricSet<unknown, S>[] = [],
    private readonly scope?: S,
  ) {
    const own = new Registry()
    this.kit = kitFor(own)
    registerHttpMetrics(own, this.routes)
    for (const set of sets) this.of(set)
    this.pgPool = sources.pgPool
    this.store = registerStoreMetrics(this.kit, sources, () => this.poolAtScrape)
    this.registry = Registry.merge([processMetrics(), own])
  }

  /** What a set counts into; a set not listed when this was made is registered on first use. */
  of<T>(set: MetricSet<T, S>): T {
    const made = this.built[set.slot] as T | undefined
    if (made !== undefined) return made
    const fresh = set.make(this.kit, this.scope as S)
    this.built[set.slot] = fresh
    return fresh
  }

  /** The series of one route template, made on its first answer and labelled with `label(template)`. */
  route(template: string, label: (template: string) => InterfaceLabel): RouteSeries {
    let series = this.routes.get(template)
    if (!series) {
      series = new RouteSeries(label(template), template, HTTP_SECONDS_BUCKETS)
      this.routes.set(template, series)
    }
    return series
  }

  /** The exposition text of every metric, as /metrics answers it. */
  render(): Promise<string> {
    this.poolAtScrape = this.pgPool?.()
    return this.registry.metrics()
  }
}
