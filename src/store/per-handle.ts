import type {Kysely} from 'kysely'

/**
 * One value per store handle and key, made by `make` on first use and dropped with the handle
 * (the handles are WeakMap keys, so a closed store's values go with it). The set writers of both
 * dialects are kept this way: one per handle and batch runner.
 */
export function perHandleAndKey<K, V>(make: (db: Kysely<any>, key: K) => V): (db: Kysely<any>, key: K) => V {
  const values = new WeakMap<object, Map<K, V>>()
  return (db, key) => {
    let byKey = values.get(db)
    if (!byKey) {
      byKey = new Map()
      values.set(db, byKey)
    }
    let value = byKey.get(key)
    if (value === undefined) {
      value = make(db, key)
      byKey.set(key, value)
    }
    return value
  }
}
