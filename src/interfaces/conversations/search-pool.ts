import {exeAsset} from '../../exe-assets.js'
import type {ConversationsDb as Db} from './tables.js'
import {onStoreClose, replicaOf, storeFile} from '../../store/handle.js'
import {isPostgres} from '../../store/dialect.js'
import {sqliteDriverName} from '../../store/runtime.js'
import {betterSqlite3Location} from '../../store/sqlite-reader.js'
import type {SearchThreadSetup} from './search-protocol.js'
import type {Searcher} from './searcher.js'
import {InProcessSearcher} from './searcher-in-process.js'
import {PostgresSearcher} from './searcher-postgres.js'
import {type PoolLimits, SearchPool} from './searcher-threads.js'

/*
 * Which searcher a store's searches run on: a pool of search threads for a store file
 * (searcher-threads.ts), PostgreSQL's own pool (searcher-postgres.ts), or the store's connection
 * (searcher-in-process.ts). What they share is in searcher.ts.
 */

export {searchUnavailable, type SearchStream, type SearchTicket, type SearchTiming, type Searcher} from './searcher.js'
export {snapshotAlongside} from './searcher-postgres.js'

/**
 * The search thread's CommonJS source, bundled from search-worker.ts and put in by the build
 * (scripts/build.mjs, and vitest.config.ts for the tests; scripts/build-exe.mjs makes it an asset
 * of the executable instead, see exe-assets.ts). Absent when medpanel runs from its TypeScript
 * sources some other way; searches then run in-process.
 */
declare const MEDPANEL_SEARCH_WORKER: string | undefined

/** The search thread's source: embedded in dist/ (and under Deno), an asset of the single executable. */
function workerSource(): string | undefined {
  return typeof MEDPANEL_SEARCH_WORKER === 'string' ? MEDPANEL_SEARCH_WORKER : exeAsset('search-worker.cjs')
}

const searchers = new WeakMap<object, Searcher>()

/** Search threads busy on the store's pool now; 0 before its first search, and where searches run without threads. */
export function searchThreadsBusy(db: Db): number {
  const searcher = searchers.get(db)
  return searcher instanceof SearchPool ? searcher.busy() : 0
}

/**
 * The searcher of a store, made on first use: a pool of search threads for a store file, the
 * store's own connection for an in-memory store (or where no thread source was built in). The
 * pool stops with the store.
 */
export function searcherFor(db: Db, limits: PoolLimits): Searcher {
  let searcher = searchers.get(db)
  if (searcher) return searcher
  const file = storeFile(db)
  const source = workerSource()
  if (isPostgres(db)) {
    const postgres = new PostgresSearcher(replicaOf(db))
    onStoreClose(db, () => postgres.close())
    searcher = postgres
  } else if (file !== undefined && source !== undefined) {
    const setup: SearchThreadSetup = {file, betterSqlite3: sqliteDriverName() === 'better-sqlite3' ? betterSqlite3Location() : undefined}
    const pool = new SearchPool(source, setup, limits)
    onStoreClose(db, () => pool.close())
    searcher = pool
  } else {
    searcher = new InProcessSearcher(db)
  }
  searchers.set(db, searcher)
  return searcher
}
