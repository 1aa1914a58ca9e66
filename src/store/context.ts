import type {PoolCounts} from '../metrics/metrics.js'
import type {HostSelector} from './postgres/hosts.js'

/**
 * What a store handle's connection is, for the store layer's own use (its writers, caches and
 * fast paths): which database, its content version, its synchronous executor. What services are
 * handed (the reader, the keys) is on the Store that openStore returns, not here.
 */
export interface StoreContext {
  /** Which database the handle talks to; SQLite when unset. */
  kind?: 'sqlite' | 'postgres'
  /** Changes whenever the store's content may have; undefined where the driver cannot tell. */
  version?: () => number | undefined
  /**
   * SQLite: a mark that moves when another connection commits or a statement through this one may
   * change the content, read fresh on each call (sqlite/handle.ts storeVersion); for a writer that
   * keeps rows in memory between its own batches.
   */
  epoch?: () => string | undefined
  /**
   * Runs one statement synchronously on the connection itself, past Kysely's connection queue,
   * and returns its rows (SQLite only). Only for a caller that holds the connection already: a
   * request inside a batch of the group writer (see writer.ts), where nothing else can use it.
   */
  direct?: DirectExecutor
  /**
   * The connection has one user, who runs one job at a time on it and nothing else (a search
   * thread's own connection): `direct` may then run any statement on it, transactions included.
   */
  exclusive?: boolean
  /**
   * PostgreSQL: a read replica of the same database (postgres/replica.ts), for reads that may
   * lag the primary by a moment and should not load it: interface E's searches.
   */
  replica?: object
  /** PostgreSQL: the withdrawal lanes of the store's writers (StoreOptions.writeLanes). */
  writeLanes?: number
  /** PostgreSQL: this process's connections in the pool, for the metrics. */
  pool?: () => PoolCounts
  /** PostgreSQL with a URL of several hosts: which one the pool's connections go to (postgres/hosts.ts). */
  hosts?: HostSelector
}

/** Runs one statement synchronously and returns its rows (StoreContext.direct). */
export type DirectExecutor = (sql: string, parameters: readonly unknown[]) => unknown[]

const contexts = new WeakMap<object, StoreContext>()

export function setContext(db: object, context: StoreContext): void {
  contexts.set(db, context)
}

export function contextOf(db: object): StoreContext | undefined {
  return contexts.get(db)
}

/**
 * A connection or transaction taken from a store handle answers for the same store, but a
 * transaction has no replica: its reads stay on it (they must see its own writes).
 */
export function inheritContext(child: object, parent: object): void {
  const context = contexts.get(parent)
  if (context) contexts.set(child, {...context, replica: undefined})
}

/** The synchronous executor of a connection nobody else uses (StoreContext.exclusive), if this is one. */
export function exclusiveDirect(db: object): DirectExecutor | undefined {
  const context = contexts.get(db)
  return context?.exclusive ? context.direct : undefined
}
