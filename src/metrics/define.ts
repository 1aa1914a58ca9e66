import type {Counter, Gauge, Histogram} from 'prom-client'

/*
 * What a part of the service declares its metrics with, without loading prom-client: the
 * commands that never serve /metrics import an interface's declarations through its services,
 * and prom-client costs every such start its load time. kit.ts builds the sets with prom-client.
 */

/** Every metric's name starts with this. */
export const METRICS_PREFIX = 'medpanel_'

/** One series of a counter: what the code that counts holds. */
export type Child = {inc(value?: number): void}

/**
 * What a part of the service declares its metrics with (defineMetrics): every name is given
 * without METRICS_PREFIX, and every metric lands in the registry of the `Metrics` that builds
 * the set. A label takes only values from a closed list or from the code, never from a request.
 */
export interface MetricKit {
  /** A counter with labels, for the few that label by more than one list (see `children`). */
  counter<T extends string>(name: string, help: string, labelNames?: readonly T[]): Counter<T>
  /** A counter without labels, made at 0. */
  single(name: string, help: string): Child
  /** A counter of one label with a child for each of `values`, each made at 0. */
  children<V extends string>(name: string, help: string, label: string, values: readonly V[]): Record<V, Child>
  histogram(name: string, help: string, buckets: readonly number[]): Histogram<string>
  /** A gauge read when scraped (a failed read leaves it without samples for that scrape). */
  scraped<T extends string>(options: {name: string; help: string; labelNames?: readonly T[]}, read: (gauge: Gauge<T>) => Promise<void> | void): void
}

/**
 * The metrics one part of the service declares in its own folder (an interface's `metrics.ts`),
 * as a `ServedInterface` declares its routes: `make` registers them with the kit and returns
 * what that part counts into. src/instrument.ts lists the sets a store's `Metrics` builds, in the
 * order /metrics shows them; code reaches its own with `metrics.of(set)`.
 */
export interface MetricSet<T, S = unknown> {
  /** Names the set where it is listed. */
  readonly title: string
  /** Its place in a `Metrics`' table of built sets. */
  readonly slot: number
  /** Registers the set's metrics; `scope` is what its gauges read from when scraped. */
  make(kit: MetricKit, scope: S): T
}

/** What a set's code counts into: `CountersOf<typeof partnerMetrics>` is what `metrics.of(partnerMetrics)` answers. */
export type CountersOf<M> = M extends MetricSet<infer T, infer _Scope> ? T : never

let slots = 0

export function defineMetrics<T, S = unknown>(title: string, make: (kit: MetricKit, scope: S) => T): MetricSet<T, S> {
  return {title, slot: slots++, make}
}

/**
 * One attempt of a delivery worker (interface B's outbox, sign-on's back-channel logout): the
 * other server answered 2xx (`delivered`) or something else (`failed`), no answer came
 * (`network_error`: refused, reset, timed out, a refused target), or nothing could be sent
 * (`undeliverable`: the client is gone, expired or lacks its URL).
 */
export const DELIVERY_OUTCOMES = ['delivered', 'failed', 'network_error', 'undeliverable'] as const
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number]
