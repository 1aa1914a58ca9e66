import type {Histogram} from 'prom-client'
import {config} from '../config.js'
import type {MetricKit} from './define.js'

export interface PoolCounts {
  total: number
  idle: number
  waiting: number
  /** The most connections the pool opens. */
  max?: number
}

/** What the store's gauges read when they are scraped (src/instrument.ts gives them the store's answers). */
export interface StoreSources {
  migrationsApplied(): Promise<number>
  /** SQLite stores: the size of the write-ahead log beside the store file (0 for an in-memory store). */
  sqliteWalBytes?: () => number
  /** PostgreSQL stores: this process's connection pool. */
  pgPool?: () => PoolCounts
  /** PostgreSQL stores: whether this process's caches are on (its listener hears the store's changes). */
  pgCachesListening?: () => boolean
  /** PostgreSQL stores on a URL of several hosts: the choice of the primary among them. */
  pgHosts?: PrimaryWatch
}

/**
 * What the metrics read of the store's choice among a URL's hosts (store/postgres/hosts.ts's
 * HostSelector has this shape): declared here, as the metrics layer sits below the store's.
 */
export interface PrimaryWatch {
  /** Told when new connections go to another server (`failover`) and when a primary is found again after `seconds` without one. */
  events: {failover?: () => void; restored?: (seconds: number) => void}
  /** Seconds since the last primary was given up: 0 while one is chosen. */
  secondsWithout(): number
}

/** What the group writers count into (store/writer.ts, store/postgres/writer.ts). */
export interface StoreMetrics {
  batchSize: Histogram<string>
  commitDuration: Histogram<string>
}

/**
 * The store's metrics, shared by every part of the service: its commits, and gauges of the kind
 * of store it is. `poolAtScrape` gives the pool's counts as the current scrape began.
 */
export function registerStoreMetrics(kit: MetricKit, sources: StoreSources, poolAtScrape: () => PoolCounts | undefined): StoreMetrics {
  const made = {
    batchSize: kit.histogram('store_commit_batch_size', 'Write transactions per commit (the group writer, on either store)', config.metrics.commitBatchBuckets),
    commitDuration: kit.histogram('store_commit_duration_seconds', 'Time of one COMMIT with its sync to disk', config.metrics.commitSecondsBuckets),
  }
  const {sqliteWalBytes, pgPool, pgCachesListening, pgHosts} = sources
  if (sqliteWalBytes) kit.scraped({name: 'store_sqlite_wal_bytes', help: "Size of the SQLite store's write-ahead log file"}, (gauge) => gauge.set(sqliteWalBytes()))
  if (pgPool) {
    const help = "This process's PostgreSQL connections: total, idle, and requests waiting for one"
    kit.scraped({name: 'store_pg_pool_connections', help, labelNames: ['state']}, (gauge) => {
      // As the scrape began: the scrape's own queries (outbox depth, sessions) would otherwise
      // wait for connections and count themselves as waiting.
      const counts = poolAtScrape() ?? pgPool()
      gauge.set({state: 'total'}, counts.total)
      gauge.set({state: 'idle'}, counts.idle)
      gauge.set({state: 'waiting'}, counts.waiting)
    })
  }
  if (pgCachesListening) {
    const help = "1 while this process's caches are on (its listener hears the store's changes), 0 while every lookup reads the database"
    kit.scraped({name: 'store_pg_cache_listening', help}, (gauge) => gauge.set(pgCachesListening() ? 1 : 0))
  }
  if (pgHosts) {
    // A URL of several hosts (a failover manager's formation): the primary moving, and the time
    // this process had none to write to (docs/operations.md, High availability).
    const failovers = kit.single('store_pg_failovers_total', 'Times this process found the primary on another server of the database URL (a failover or a switchover)')
    const without = kit.single('store_pg_without_primary_seconds_total', 'Seconds this process had no primary to write to, over the outages that have ended')
    pgHosts.events.failover = () => failovers.inc()
    pgHosts.events.restored = (seconds) => without.inc(seconds)
    const help = 'Seconds since this process last had a primary to write to: 0 while it has one'
    kit.scraped({name: 'store_pg_seconds_without_primary', help}, (gauge) => gauge.set(pgHosts.secondsWithout()))
  }
  kit.scraped({name: 'store_migrations_applied', help: 'Store migrations recorded as applied'}, async (gauge) => gauge.set(await sources.migrationsApplied()))
  return made
}
