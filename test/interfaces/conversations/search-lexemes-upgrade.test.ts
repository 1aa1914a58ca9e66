import {sql} from 'kysely'
import {narrow} from '../../../src/store/database.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {type Database, openStore, SERVICE_SCHEMA} from '../../../src/schema.js'
import {openStore as openStoreWith, type Store} from '../../../src/store/db.js'
import {emptyStore, onPostgres, openTestStore} from '../../helpers/store.js'
import {clientWithKey, JSON_TYPE, query} from './helpers.js'

/*
 * The 2026113001 migration rebuilds every post's and comment's index entry on PostgreSQL (and is
 * empty on SQLite). A store written before it, posts and all, must answer every search after it
 * exactly as a store that had it from the start: the same posts seeded into both.
 */
const MIGRATION = '2026113001_conversation_search_lexemes'
const SEED = {count: 300, comments: 3, from: '2023-06-01T00:00:00Z', to: '2025-06-30T23:59:59Z', seed: 17}
const TERMS = ['metformin', 'chest pain', 'heart failure with reduced ejection fraction', 'the', 'Atrial Fibrillation']
const WINDOWS: [string, string][] = [
  ['2024-01-01T00:00:00Z', '2024-12-31T23:59:59Z'],
  ['2023-06-15T08:30:00Z', '2024-02-03T17:00:00Z'],
  ['2025-03-01T00:00:00Z', '2025-03-01T23:59:59Z'],
]

describe(`a store written before ${MIGRATION}`, () => {
  const place = emptyStore()
  let upgraded: Store
  let fresh: Store

  beforeAll(async () => {
    const before = {...SERVICE_SCHEMA, migrations: Object.fromEntries(Object.entries(SERVICE_SCHEMA.migrations).filter(([name]) => name !== MIGRATION))}
    const old = await openStoreWith<Database>(place.options, before)
    await seedPosts(narrow(old.db), SEED)
    await old.close()
    upgraded = await openStore(place.options)
    fresh = await openTestStore()
    await seedPosts(fresh.db, SEED)
  })
  afterAll(async () => {
    await upgraded?.close()
    await fresh?.close()
    place.drop()
  })

  async function answers(store: Store) {
    const clock = new ManualClock()
    const app = createApp({store, clock, log: () => undefined})
    const {key} = await clientWithKey({store, db: store.db, clock, app, logs: []}, {data_calls: 100})
    const out = []
    for (const [start, end] of WINDOWS) {
      for (const method of ['summary', 'data']) {
        const res = await app.request(`/conversations/${method}?${query(TERMS, start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key}})
        expect(res.status).toBe(200)
        const body = await res.json()
        out.push({method, start, summary: body.summary, posts: body.conversations?.map((c: {post: {id: number}}) => c.post.id)})
      }
    }
    return out
  }

  it('answers every search exactly as a store that had it from the start', async () => {
    const got = await answers(upgraded)
    expect(got.some((answer) => answer.summary.uniques.posts > 0)).toBe(true)
    expect(got).toEqual(await answers(fresh))
  })

  it.runIf(onPostgres)("indexes every row's dates and word pairs on PostgreSQL", async () => {
    const count = async (statement: ReturnType<typeof sql<{n: string}>>) => Number((await statement.execute(upgraded.db)).rows[0]!.n)
    const posts2024 = await count(sql`select count(*) as n from conversation_posts where published_at like '2024%'`)
    expect(posts2024).toBeGreaterThan(0)
    expect(await count(sql`select count(*) as n from conversation_posts where search_terms @@ '@2024'::tsquery`)).toBe(posts2024)
    const comments = await count(sql`select count(*) as n from conversation_comments`)
    expect(await count(sql`select count(*) as n from conversation_comments where search_terms @@ '@2023 | @2024 | @2025'::tsquery`)).toBe(comments)
    const pairs = await count(sql`select count(*) as n from conversation_comments where search_terms @@ '''chest pain'''::tsquery`)
    expect(pairs).toBeGreaterThan(0)
    expect(pairs).toBe(await count(sql`select count(*) as n from conversation_comments where strpos(' ' || array_to_string(content_tokens, ' ') || ' ', ' chest pain ') > 0`))
  })
})
