import {describe, expect, it} from 'vitest'
import {openSqlite} from '../../src/store/db.js'
import {statementCacheStats} from '../../src/store/handle.js'
import {STATEMENT_CACHE_LIMITS, withStatementCache} from '../../src/store/sqlite/handle.js'
import {mulberry32} from '../../src/lib/prng.js'
import {freshApp} from '../helpers/app.js'
import {clientWithKey, query} from '../interfaces/conversations/helpers.js'

describe('the statement cache', () => {
  it('keeps the statements that repeat, least recently used out first, within a count and a text budget', async () => {
    const handle = withStatementCache(await openSqlite(':memory:'), {entries: 3, textBytes: 60, largest: 30})
    const text = (n: number) => `select ${n} as n`
    for (const n of [1, 2, 3, 1, 1]) handle.prepare(text(n))
    expect(handle.cacheStats()).toEqual({entries: 3, textBytes: 3 * 13, prepared: 3})
    handle.prepare(text(4)) // 2 is the least recently used: 1 was used again
    handle.prepare(text(1))
    handle.prepare(text(3))
    expect(handle.cacheStats().prepared).toBe(4)
    handle.prepare(text(2))
    expect(handle.cacheStats().prepared).toBe(5)
    // longer than `largest`: run, never kept
    const long = `select 1 as n where 1 = 1 and 2 = 2`
    expect(long.length).toBeGreaterThan(30)
    handle.prepare(long)
    handle.prepare(long)
    expect(handle.cacheStats()).toMatchObject({entries: 3, prepared: 7})
    // the text budget evicts before the count does
    const wide = (n: number) => `select ${n} as nnnnnnnnnnnnnnnnn`
    for (const n of [1, 2, 3]) handle.prepare(wide(n))
    expect(handle.cacheStats().entries).toBe(2)
    expect(handle.cacheStats().textBytes).toBeLessThanOrEqual(60)
    handle.close()
  })

  it('settles while 450 summary calls of different term shapes go by', async () => {
    const ctx = await freshApp()
    const {key} = await clientWithKey(ctx)
    const random = mulberry32(14)
    const shapes = new Set<string>()
    // The index statement's shape: the terms of three words or more (shorter ones are summed from
    // the per-day statistics, by a statement that is the same for every term).
    const indexShapes = new Set<string>()
    let searchingIndex = 0
    const baseline = statementCacheStats(ctx.db)!
    let largest = {entries: 0, textBytes: 0}
    // 450 shapes, over 350 of them new to the index statement: the 256 entries the cache keeps
    // fill, and then about a hundred are evicted one by one (800 and 2,000 proved nothing more,
    // at 6 ms to prepare each new index statement).
    while (shapes.size < 450) {
      const words = Array.from({length: 1 + Math.floor(random() * 4)}, () => 1 + Math.floor(random() * 12))
      const shape = words.join(',')
      if (shapes.has(shape)) continue
      shapes.add(shape)
      indexShapes.add(words.map((n, t) => (n > 2 ? `${t}:${n}` : '')).join(','))
      if (words.some((n) => n > 2)) searchingIndex += 1
      const terms = words.map((n, t) => Array.from({length: n}, (_, w) => `t${t}w${w}`).join(' '))
      const res = await ctx.app.request(`/conversations/summary?${query(terms, '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {
        headers: {'X-Service-Conversation-API-Key': key.api_key},
      })
      expect(res.status).toBe(200)
      ctx.clock.advance(1)
      const stats = statementCacheStats(ctx.db)!
      largest = {entries: Math.max(largest.entries, stats.entries), textBytes: Math.max(largest.textBytes, stats.textBytes)}
    }
    expect(STATEMENT_CACHE_LIMITS).toEqual({entries: 256, textBytes: 512 * 1024, largest: 16 * 1024})
    expect(largest.entries).toBeLessThanOrEqual(256)
    expect(largest.textBytes).toBeLessThanOrEqual(512 * 1024)
    // Only the index statements were prepared anew, each new shape at least once and at most once
    // per call that had one (a large one is never kept): the key lookups, the call log and the
    // statistics' statements stayed cached throughout.
    const prepared = statementCacheStats(ctx.db)!.prepared - baseline.prepared
    expect(indexShapes.size).toBeGreaterThan(350)
    expect(prepared).toBeGreaterThanOrEqual(indexShapes.size)
    expect(prepared).toBeLessThan(searchingIndex + 50)
    await ctx.store.close()
  })
})
