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
export interface VersionCache<K, V> {
  (db: Kysely<any>, key: K, load: () => Promise<V>): Promise<V>
  /**
   * The result kept for `key` if it was read at the store's current version, without reading
   * anything: undefined when none is kept, the store has moved since, or the store cannot tell
   * its version. For a hot path that answers at once from memory and otherwise takes the way
   * that reads (the call above).
   */
  peek(db: Kysely<any>, key: K): V | undefined
}

export function versionCache<K, V>(limit: number, keep: (value: V) => boolean = () => true): VersionCache<K, V> {
  const caches = new WeakMap<object, Map<K, {version: number; value: V}>>()
  const peek = (db: Kysely<any>, key: K): V | undefined => {
    const version = storeVersion(db)
    if (version === undefined) return undefined
    const hit = caches.get(db)?.get(key)
    return hit && hit.version === version ? hit.value : undefined
  }
  const cached = async (db: Kysely<any>, key: K, load: () => Promise<V>): Promise<V> => {
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
  return Object.assign(cached, {peek})
}
