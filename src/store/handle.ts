import {sql, type Kysely} from 'kysely'
import {contextOf, type StoreContext} from './context.js'
import {storeKind} from './dialect.js'
import type {StatementCacheStats} from './sqlite/handle.js'

/*
 * What a store handle carries besides its connection, as openStore (db.ts) gave it: its file, its
 * statement cache, its replica, what runs when it closes. The read-only connection and the keys
 * are not here: they are fields of the Store itself, handed to the services that use them.
 */

const cacheStats = new WeakMap<object, () => StatementCacheStats>()
const images = new WeakMap<object, () => Uint8Array>()
const files = new WeakMap<object, string>()
const closers = new WeakMap<object, (() => Promise<void>)[]>()

/** What openStore found out about a handle it opened, for the accessors below (db.ts only). */
export function recordHandle(db: object, found: {cacheStats?: (() => StatementCacheStats) | undefined; image?: (() => Uint8Array) | undefined; file?: string | undefined}): void {
  if (found.cacheStats) cacheStats.set(db, found.cacheStats)
  if (found.image) images.set(db, found.image)
  if (found.file) files.set(db, found.file)
}

/** Takes what is to run when the handle closes (onStoreClose), once: db.ts's close. */
export function takeClosers(db: object): (() => Promise<void>)[] {
  const pending = closers.get(db) ?? []
  closers.delete(db)
  return pending
}

/** What the statement cache of the store's connection holds (see withStatementCache). */
export function statementCacheStats(db: Kysely<any>): StatementCacheStats | undefined {
  return cacheStats.get(db)?.()
}

/**
 * The bytes of a SQLite store as it is now, to open copies of it (StoreOptions.image); undefined
 * where the driver cannot serialize (node:sqlite) and on PostgreSQL.
 */
export function storeImage(db: Kysely<any>): Uint8Array | undefined {
  return images.get(db)?.()
}

/**
 * The absolute path of the SQLite file behind a store, for code that opens connections of its
 * own to it (interface E's search threads). Undefined for an in-memory store, which no other
 * connection can reach.
 */
export function storeFile(db: Kysely<any>): string | undefined {
  return files.get(db)
}

/**
 * SQLite: copies the write-ahead log into the store file and empties it (a TRUNCATE checkpoint),
 * so a serve that stopped leaves the whole store in its one file, for a backup or copy taken right
 * after. False when a reader held part of the log back (the next open moves the rest). PostgreSQL
 * (its server checkpoints its own log) and an in-memory store: undefined, nothing done.
 */
export async function checkpointStore(db: Kysely<any>): Promise<boolean | undefined> {
  if (storeKind(db) !== 'sqlite' || storeFile(db) === undefined) return undefined
  const {rows} = await sql<{busy: number}>`pragma wal_checkpoint(TRUNCATE)`.execute(db)
  return rows[0]?.busy === 0
}

/** Runs `fn` when the store is closed, before its connection goes (a search pool stops its threads). */
export function onStoreClose(db: Kysely<any>, fn: () => Promise<void>): void {
  const list = closers.get(db) ?? []
  list.push(fn)
  closers.set(db, list)
}

/**
 * PostgreSQL: whether this process caches now (its listener hears the store's changes); undefined
 * on SQLite, whose caches need no listener.
 */
export function cachesListening(db: Kysely<any>): boolean | undefined {
  return storeKind(db) === 'postgres' ? contextOf(db)?.version?.() !== undefined : undefined
}

/** PostgreSQL with a URL of several hosts: the pool's choice among them (postgres/hosts.ts). */
export function hostSelection(db: Kysely<any>): StoreContext['hosts'] {
  return contextOf(db)?.hosts
}

/** PostgreSQL: the connections of this process's pool; undefined for SQLite. */
export function poolCounts(db: Kysely<any>): ReturnType<NonNullable<StoreContext['pool']>> | undefined {
  return contextOf(db)?.pool?.()
}

/**
 * A value that changes whenever the store's content may have changed (a write through this
 * handle, or a commit by any other connection), for caches that must never serve stale rows.
 * Undefined where the driver cannot tell; callers then do not cache.
 */
export function storeVersion(db: Kysely<any>): number | undefined {
  return contextOf(db)?.version?.()
}

/**
 * SQLite: the store's epoch as this handle sees it now (StoreContext.epoch); undefined on
 * PostgreSQL and where the driver cannot tell.
 */
export function storeEpoch(db: Kysely<any>): string | undefined {
  return contextOf(db)?.epoch?.()
}

/**
 * Where a search that may lag the primary by a moment reads: the store's read replica when it was
 * opened with one (StoreOptions.replicaUrl), else `db` itself.
 */
export function replicaOf<DB>(db: Kysely<DB>): Kysely<DB> {
  return (contextOf(db)?.replica as Kysely<DB> | undefined) ?? db
}
