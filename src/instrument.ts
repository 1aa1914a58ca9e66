import {statSync} from 'node:fs'
import {narrow} from './store/database.js'
import {searchThreadsBusy} from './interfaces/conversations/search-pool.js'
import {pendingByClient} from './interfaces/partner/repository.js'
import {countLiveSessions} from './interfaces/signon/repository.js'
import {type Clock, iso} from './lib/clock.js'
import {Metrics, type OutboxBacklog} from './metrics/metrics.js'
import {listClients} from './registry/repository.js'
import {hasGrant} from './registry/service.js'
import {passwordHashCounts} from './registry/throttle.js'
import {bindMetrics, metricsOf} from './store/context.js'
import type {Db} from './schema.js'
import {cachesListening, poolCounts, readerOf, storeFile} from './store/db.js'
import {storeKind} from './store/dialect.js'
import {appliedMigrations} from './store/migrate.js'
import {SERVICE_SCHEMA} from './schema.js'

/**
 * The metrics of the store an app serves: made with the first app on the store and bound to it
 * (store/context.ts), so every app on that store, the delivery worker and the layers below count
 * into one registry, and /metrics shows them all. Its gauges read the store when scraped, on the
 * read-only connection where there is one, so a scrape never waits behind a batch of writes.
 */
export function storeMetrics(db: Db, clock: Clock): Metrics {
  const bound = metricsOf(db)
  if (bound) return bound
  const postgres = storeKind(db) === 'postgres'
  const metrics = new Metrics({
    activeSessions: () => countLiveSessions(narrow(readerOf(db)), iso(clock.now())),
    outbox: () => outboxBacklog(db, clock),
    searchThreadsBusy: () => searchThreadsBusy(narrow(db)),
    passwordHashes: passwordHashCounts,
    migrationsApplied: () => appliedMigrations(readerOf(db), SERVICE_SCHEMA),
    ...(postgres
      ? {pgPool: () => poolCounts(db) ?? {total: 0, idle: 0, waiting: 0}, pgCachesListening: () => cachesListening(db) === true}
      : {sqliteWalBytes: () => walBytes(storeFile(db))}),
  })
  bindMetrics(db, metrics)
  return metrics
}

/** Every partner client's pending deliveries, those with none at 0 (so a drained outbox reads 0, not stale). */
async function outboxBacklog(db: Db, clock: Clock): Promise<OutboxBacklog[]> {
  const reader = readerOf(db)
  const [pending, clients] = await Promise.all([pendingByClient(narrow(reader)), listClients(narrow(reader))])
  const now = clock.now().getTime()
  const byClient = new Map(pending.map((row) => [row.client_id, row]))
  const partners = new Set([...clients.filter((client) => hasGrant(client, 'partner')).map((client) => client.id), ...byClient.keys()])
  return [...partners].sort().map((partner) => {
    const row = byClient.get(partner)
    return {partner, depth: row?.depth ?? 0, oldestAgeSeconds: row ? Math.max(0, (now - Date.parse(row.oldest)) / 1000) : 0}
  })
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
