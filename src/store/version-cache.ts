import type {Kysely} from 'kysely'
import {storeVersion} from './handle.js'

/**
 * Results of plain reads, each reused while the store version it was read at holds (see
 * storeVersion): any write — in this process or, on SQLite, a commit by another — changes the
 * version, so a cached result is never older than the last write the store has seen. Per store
 * handle, at most `limit` keys (emptied when full). Where the store cannot tell its version
 * (PostgreSQL), nothing is cached and every call reads.
 *
 * `keep` says which results may be kept; the rest are read again every time.
 */
export function versionCache<K, V>(limit: number, keep: (value: V) => boolean = () => true): (db: Kysely<any>, key: K, load: () => Promise<V>) => Promise<V> {
  const caches = new WeakMap<object, Map<K, {version: number; value: V}>>()
  return async (db, key, load) => {
    // The version is read before the query: a write landing in between only costs a re-read.
    const version = storeVersion(db)
    if (version === undefined) return load()
    let cache = caches.get(db)
    const hit = cache?.get(key)
    if (hit && hit.version === version) return hit.value
    const value = await load()
    if (keep(value)) {
      if (!cache) {
        cache = new Map()
        caches.set(db, cache)
      }
      if (cache.size >= limit) cache.clear()
      cache.set(key, {version, value})
    }
    return value
  }
}
