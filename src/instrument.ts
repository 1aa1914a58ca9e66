import {statSync} from 'node:fs'
import {grantMetrics} from './grants/metrics.js'
import {balanceMetrics} from './interfaces/balance/metrics.js'
import {searchMetrics} from './interfaces/conversations/metrics.js'
import {partnerMetrics} from './interfaces/partner/metrics.js'
import {signonMetrics} from './interfaces/signon/metrics.js'
import type {Clock} from './lib/clock.js'
import {type MetricSet, Metrics} from './metrics/metrics.js'
import {registryMetrics} from './registry/metrics.js'
import {passwordHashCounts} from './registry/throttle.js'
import type {ServiceStore} from './schema.js'
import type {StoreHandle} from './store/database.js'
import {cachesListening, hostSelection, poolCounts, storeFile} from './store/handle.js'
import {writeStats} from './store/transactions.js'
import {storeKind} from './store/dialect.js'
import {appliedMigrations} from './store/migrate.js'
import {SERVICE_SCHEMA} from './schema.js'

/** What the declared sets' gauges read from when scraped. */
interface Scope {
  /** Untyped: each set's gauges read it as the view of the tables their own part may see. */
  db: StoreHandle
  /** Where the gauges' reads go (Store.reader), so a scrape never waits behind a batch of writes. */
  reader: StoreHandle
  clock: Clock
  passwordHashes(): {running: number; waiting: number; standIns: number}
}

/**
 * The metrics each part declares in its own folder, in the order /metrics lists them (after the
 * HTTP metrics, before the store's): as SERVED_INTERFACES lists the interfaces' routes.
 */
const DECLARED_METRICS: readonly MetricSet<unknown, Scope>[] = [grantMetrics, signonMetrics, partnerMetrics, balanceMetrics, searchMetrics, registryMetrics]

/** The registry made for each store handle (storeMetrics): one per store, however many apps serve it. */
const registries = new WeakMap<object, Metrics>()

/**
 * The metrics of the store an app serves: made with the first app on the store, and the same
 * registry for every later app on it, so /metrics shows one count however many apps serve the
 * store. The registry is handed on from there (RouteDeps.metrics, the workers' options); only
 * the store's group writer is told of it here, to count its commits. Its gauges read the store
 * when scraped, on the read-only connection where there is one, so a scrape never waits behind a
 * batch of writes.
 */
export function storeMetrics(store: ServiceStore, clock: Clock): Metrics {
  const {db, reader} = store
  const made = registries.get(db)
  if (made) return made
  const postgres = storeKind(db) === 'postgres'
  const sources = {
    migrationsApplied: () => appliedMigrations(reader, SERVICE_SCHEMA),
    ...(postgres
      ? {
          pgPool: () => poolCounts(db) ?? {total: 0, idle: 0, waiting: 0},
          pgCachesListening: () => cachesListening(db) === true,
          ...(hostSelection(db) ? {pgHosts: hostSelection(db)} : {}),
        }
      : {sqliteWalBytes: () => walBytes(storeFile(db))}),
  }
  const metrics = new Metrics<Scope>(sources, DECLARED_METRICS, {db, reader, clock, passwordHashes: passwordHashCounts})
  registries.set(db, metrics)
  writeStats(db).onCommit = (seconds, transactions) => {
    metrics.store.commitDuration.observe(seconds)
    metrics.store.batchSize.observe(transactions)
  }
  return metrics
}

/** The size of the write-ahead log beside a SQLite store file; 0 without one (an in-memory store, or none written yet). */
function walBytes(file: string | undefined): number {
  if (file === undefined) return 0
  try {
    return statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}
