import type {Counter, Registry} from 'prom-client'
import {config} from '../config.js'
import {METRICS_PREFIX} from './define.js'

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

/** The bounds of the HTTP duration buckets (config.ts says why). */
export const HTTP_SECONDS_BUCKETS = config.metrics.httpSecondsBuckets

/** Registers the HTTP metrics, read from `routes` (every route's series, by template) when scraped. */
export function registerHttpMetrics(registry: Registry, routes: ReadonlyMap<string, RouteSeries>): void {
  preAggregated(registry, {
    name: `${METRICS_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by interface (A, C, D, E or other), route template and status class',
    type: 'counter',
    values: () =>
      [...routes.values()].flatMap((series) =>
        series.byClass.flatMap((value, statusClass) => (value > 0 ? [{labels: {interface: series.iface, route: series.route, status_class: `${statusClass}xx`}, value}] : [])),
      ),
  })
  const durationName = `${METRICS_PREFIX}http_request_duration_seconds`
  preAggregated(registry, {
    name: durationName,
    help: 'Time from a request reaching the app to its answer being ready (a streamed body is not waited for)',
    type: 'histogram',
    values: () => [...routes.values()].flatMap((series) => durationSamples(durationName, series)),
  })
}

/** One route's duration histogram as samples: cumulative buckets, then the sum and the count. */
function durationSamples(name: string, series: RouteSeries): Sample[] {
  const labels = {interface: series.iface, route: series.route}
  let cumulative = 0
  const buckets = HTTP_SECONDS_BUCKETS.map((le, i) => {
    cumulative += series.buckets[i]!
    return {labels: {...labels, le}, value: cumulative, metricName: `${name}_bucket`}
  })
  return [
    ...buckets,
    {labels: {...labels, le: '+Inf'}, value: series.count, metricName: `${name}_bucket`},
    {labels, value: series.sum, metricName: `${name}_sum`},
    {labels, value: series.count, metricName: `${name}_count`},
  ]
}
