import type {AnyMigration} from '../migration-types.js'
import * as cacheNotify from './2026112801_cache_notify.js'
import * as storeWriteLock from './2026112802_store_write_lock.js'

/** The store's own migrations: what its caches and its group writer need, whatever the tables. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112801_cache_notify': cacheNotify,
  '2026112802_store_write_lock': storeWriteLock,
}
