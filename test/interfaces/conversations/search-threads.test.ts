import {sql} from 'kysely'
import {narrow} from '../../../src/store/database.js'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {defaultLimits, type ConversationLimits} from '../../../src/interfaces/conversations/limits.js'
import {searcherFor} from '../../../src/interfaces/conversations/search-pool.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {updateApiKey} from '../../../src/interfaces/conversations/keys.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {openStore} from '../../../src/schema.js'
import type {Store} from '../../../src/store/db.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {tempDir} from '../../helpers/cli.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE} from './helpers.js'
import {writesSettled} from '../../../src/store/transactions.js'

/*
 * On a store file, searches run on search threads with their own read-only connections (see
 * search-pool.ts). These tests run the real threads, from the same bundled source `serve` embeds.
 */

const YEAR = ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'] as const
const SMALL = {count: 300, comments: 3, from: YEAR[0], to: YEAR[1], seed: 5}
const WORDS = 'a the of on with to and for in i is after it dose patient but has only old year this came had we'.split(' ')
/** The largest search allowed: 20 phrases of 12 of the commonest words. */
const HEAVY = Array.from({length: 20}, (_, i) => Array.from({length: 12}, (_, j) => WORDS[(i + j) % WORDS.length]!).join(' '))

/** An app on `store` with its own limits; apps on one store share its search threads. */
function appOn(store: Store, limits: Partial<ConversationLimits> = {}): TestContext {
  const clock = new ManualClock()
  const logs: string[] = []
  const app = createApp({store, clock, log: (line) => logs.push(line), conversations: limits})
  return {store, db: store.db, clock, app, logs}
}

async function storeFile(seed?: Parameters<typeof seedPosts>[1]): Promise<Store> {
  const store = await openStore({file: join(tempDir('medpanel-threads-'), 'store.db')})
  if (seed) await seedPosts(narrow(store.db), seed)
  return store
}

const get = (ctx: TestContext, key: string, method: string, terms: string[], accept = JSON_TYPE) =>
  ctx.app.request(`/conversations/${method}?${query(terms, ...YEAR)}`, {headers: {Accept: accept, 'X-Service-Conversation-API-Key': key}})

describe('searches on threads', () => {
  const open: Store[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()))
  })

  it('answer byte for byte as the in-process search does', async () => {
    const threaded = appOn(await storeFile(SMALL))
    const inProcess = await freshApp()
    open.push(threaded.store, inProcess.store)
    await seedPosts(inProcess.db, SMALL)
    const keys = [(await clientWithKey(threaded, {data_calls: 10})).key.api_key, (await clientWithKey(inProcess, {data_calls: 10})).key.api_key]
    const text = async (ctx: TestContext, key: string, method: string, accept: string) => {
      const res = await get(ctx, key, method, ['metformin', 'chest pain', 'the'], accept)
      expect(res.status).toBe(200)
      return (await res.text()).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, 'ID')
    }
    for (const accept of [JSON_TYPE, XML_TYPE]) {
      for (const method of ['summary', 'data']) {
        const a = await text(threaded, keys[0]!, method, accept)
        if (method === 'data') expect(a.length).toBeGreaterThan(100_000)
        expect(a).toBe(await text(inProcess, keys[1]!, method, accept))
      }
    }
    expect(searcherFor(threaded.db, defaultLimits()).threaded).toBe(true)
    expect(searcherFor(inProcess.db, defaultLimits()).threaded).toBe(false)
  })

  it('writes a data answer page by page as the thread reads it', async () => {
    const ctx = appOn(await storeFile(SMALL), {pageSize: 40})
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 1})
    const res = await get(ctx, key.api_key, 'data', ['the'])
    const chunks: Uint8Array[] = []
    const reader = res.body!.getReader()
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    const pages = Math.ceil(body.conversations.length / 40)
    expect(pages).toBeGreaterThan(3)
    // the head, one piece per page, the tail
    expect(chunks).toHaveLength(pages + 2)
    expect(new TextDecoder().decode(chunks[0])).toMatch(/^\{"id":.*"conversations":\[$/)
  })

  describe('on a store of 5,000 posts', () => {
    let big: Store
    beforeAll(async () => {
      // Big enough that the heaviest search runs far past the 30 ms budget below (20,000 posts
      // proved nothing more, and took half a minute to seed on every runtime).
      big = await storeFile({count: 5_000, comments: 4, from: YEAR[0], to: YEAR[1], seed: 3})
    })
    afterAll(async () => big.close())

    it('stop a search past its time budget: 503, the data call given back, and a new thread for the next search', async () => {
      const roomy = appOn(big)
      const hurried = appOn(big, {searchBudgetMs: 30})
      const {key} = await clientWithKey(roomy, {data_calls: 1})
      expect((await get(roomy, key.api_key, 'summary', ['metformin'])).status).toBe(200)

      const stopped = await get(hurried, key.api_key, 'summary', HEAVY)
      expect(stopped.status).toBe(503)
      expect(stopped.headers.get('retry-after')).toBe('5')
      expect(await stopped.json()).toEqual({
        code: 503,
        message: 'service temporarily unavailable',
        details: 'A search may take at most 0.03 s, waiting for a free search thread included; this one was stopped. Narrow the window or the terms, or try again later.',
      })
      const data = await get(hurried, key.api_key, 'data', HEAVY, XML_TYPE)
      expect(data.status).toBe(503)
      expect(await data.text()).toContain('<code>503</code>')
      expect((await updateApiKey(big.db, key.id, {}, roomy.clock.now())).data_calls_remaining).toBe(1)
      // Only the answered call is logged: a stopped summary is not recorded.
      await writesSettled(big.db)
      const logged = await big.db.selectFrom('conversation_calls').select('key_id').where('key_id', '=', key.id).execute()
      expect(logged).toHaveLength(1)

      const after = await get(roomy, key.api_key, 'summary', HEAVY)
      expect(after.status).toBe(200)
      expect((await after.json()).summary.terms).toHaveLength(20)
    })
  })

  it('give a data call back when the search fails on the thread', async () => {
    const ctx = appOn(await storeFile(SMALL))
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 1})
    // The per-day statistics a one-word summary over a year reads.
    await sql`drop table conversation_term_days`.execute(ctx.db)
    const res = await get(ctx, key.api_key, 'data', ['metformin'])
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({code: 503, message: 'service temporarily unavailable', details: 'Try again shortly.'})
    expect((await updateApiKey(ctx.db, key.id, {}, ctx.clock.now())).data_calls_remaining).toBe(1)
    expect(ctx.logs.some((line) => line.includes('no such table: conversation_term_days'))).toBe(true)
  })

  it("end a failed summary's snapshot on its thread, so the next searches there run", async () => {
    // One thread: every search below runs on the same connection, which a summary uses directly.
    const ctx = appOn(await storeFile(SMALL), {threads: 1})
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 1})
    const first = await get(ctx, key.api_key, 'summary', ['metformin'])
    expect(first.status).toBe(200)
    const counts = (await first.json()).summary
    // The statistics gone: the summary fails after the plan's first statement, inside its snapshot.
    await sql`alter table conversation_term_days rename to conversation_term_days_away`.execute(ctx.db)
    expect((await get(ctx, key.api_key, 'summary', ['metformin'])).status).toBe(503)
    await sql`alter table conversation_term_days_away rename to conversation_term_days`.execute(ctx.db)
    const again = await get(ctx, key.api_key, 'summary', ['metformin'])
    expect(again.status).toBe(200)
    expect((await again.json()).summary).toEqual(counts)
    expect((await get(ctx, key.api_key, 'data', ['metformin'])).status).toBe(200)
  })

  it('refuse a data answer over the cap before sending anything, and give the call back', async () => {
    const ctx = appOn(await storeFile(SMALL), {maxConversations: 25})
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 1})
    const res = await get(ctx, key.api_key, 'data', ['the'])
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      code: 400,
      message: 'more than 25 conversations match; one data answer holds at most 25',
      details: 'Narrow the window or the terms, and split the search over several calls.',
    })
    expect((await updateApiKey(ctx.db, key.id, {}, ctx.clock.now())).data_calls_remaining).toBe(1)
    const few = await get(ctx, key.api_key, 'data', ['metformin'])
    expect(few.status).toBe(200)
    expect((await few.json()).conversations.length).toBeLessThanOrEqual(25)
  })

  it('end an answer nobody reads, freeing its thread', async () => {
    const ctx = appOn(await storeFile(SMALL), {stallMs: 200, pageSize: 20, threads: 1})
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 2})
    const res = await get(ctx, key.api_key, 'data', ['the'])
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    await reader.read()
    await new Promise((resolve) => setTimeout(resolve, 600))
    // the one thread is free again while the stalled answer is still open
    expect((await get(ctx, key.api_key, 'summary', ['the'])).status).toBe(200)
    await expect(async () => {
      for (let next = await reader.read(); !next.done; next = await reader.read());
    }).rejects.toThrow()
    expect(ctx.logs.some((line) => line.includes('failed mid-stream') && line.includes('the answer was not read for too long'))).toBe(true)
  })

  it('answer 503 at once when too many searches wait', async () => {
    const ctx = appOn(await storeFile(SMALL), {threads: 1, queue: 0})
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx)
    const answers = await Promise.all([get(ctx, key.api_key, 'summary', HEAVY), get(ctx, key.api_key, 'summary', HEAVY)])
    expect(answers.map((r) => r.status).sort()).toEqual([200, 503])
    const refused = answers.find((r) => r.status === 503)!
    expect(refused.headers.get('retry-after')).toBe('1')
    expect((await refused.json()).details).toBe('At most 0 searches wait for a search thread; try again shortly.')
  })
})
