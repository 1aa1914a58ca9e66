import {sql} from 'kysely'
import {copyFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import type {ConversationLimits} from '../../../src/interfaces/conversations/limits.js'
import {isLightSummary} from '../../../src/interfaces/conversations/repository.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {DAY_MS} from '../../../src/interfaces/conversations/term-days.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {openStore} from '../../../src/schema.js'
import type {Store} from '../../../src/store/db.js'
import type {TestContext} from '../../helpers/app.js'
import {tempDir} from '../../helpers/cli.js'
import {onPostgres} from '../../helpers/store.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE} from './helpers.js'

/*
 * On a store `serve` opens (a file, with a read connection beside the writer), a summary whose
 * per-day statistics bound its work to a few milliseconds runs on the event loop's read
 * connection, since handing it to a search thread and back costs more than the search. Heavier
 * ones, and every summary of a store without a read connection, go to a thread. The answers are
 * the same either way.
 */

const YEAR = ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'] as const
const SMALL = {count: 300, comments: 3, from: YEAR[0], to: YEAR[1], seed: 5}
const TERMS = ['metformin', 'chest pain', 'the']

const INLINE = 'medpanel_search_inline_summaries_total'
const WAITED = 'medpanel_search_queue_wait_seconds_count'

async function metric(ctx: TestContext, name: string): Promise<number> {
  const text = await (await ctx.app.request('/metrics')).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line ? Number(line.split(' ')[1]) : Number.NaN
}

/** The statistics the decision reads, summed by SQL here: (rows, docs) of `tokens` over the days `start`..`end` touch. */
async function statistics(store: Store, tokens: string[], start: string, end: string): Promise<{rows: number; docs: number}> {
  const first = Math.floor(Date.parse(start) / DAY_MS)
  const last = Math.floor(Date.parse(end) / DAY_MS)
  const {rows} = await sql<{rows: number; docs: number}>`
    select count(*) as rows, coalesce(sum(docs), 0) as docs from conversation_term_days
    where term in (${sql.join(tokens)}) and kind in (0, 1) and day between ${first} and ${last}`.execute(store.db)
  return {rows: Number(rows[0]!.rows), docs: Number(rows[0]!.docs)}
}

describe.skipIf(onPostgres)('summaries on the event loop', () => {
  const open: Store[] = []
  /** A store seeded once; each test's stores are copies of it. */
  let seeded: string
  beforeAll(async () => {
    seeded = join(tempDir('medpanel-inline-'), 'seeded.db')
    const store = await openStore({file: seeded})
    await seedPosts(store.db, SMALL)
    await store.close()
  })
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()))
  })

  /** A copy of the seeded store, opened as `serve` opens it (`reader`) or as a command does. */
  async function appOn(options: {reader: boolean; limits?: Partial<ConversationLimits>}): Promise<TestContext & {key: string}> {
    const file = join(tempDir('medpanel-inline-'), 'store.db')
    copyFileSync(seeded, file)
    const store = await openStore({file, reader: options.reader})
    open.push(store)
    const clock = new ManualClock()
    const ctx: TestContext = {store, db: store.db, clock, logs: [], app: createApp({db: store.db, clock, log: () => undefined, conversations: {threads: 2, ...options.limits}})}
    const {key} = await clientWithKey(ctx, {data_calls: 5})
    return {...ctx, key: key.api_key}
  }

  const summary = async (ctx: TestContext & {key: string}, accept = JSON_TYPE, terms = TERMS) => {
    const res = await ctx.app.request(`/conversations/summary?${query(terms, ...YEAR)}`, {headers: {Accept: accept, 'X-Service-Conversation-API-Key': ctx.key}})
    expect(res.status).toBe(200)
    return (await res.text()).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, 'ID')
  }

  it('answers a light summary on the loop, byte for byte as a search thread does', async () => {
    const loop = await appOn({reader: true})
    const threads = await appOn({reader: false})
    for (const accept of [JSON_TYPE, XML_TYPE]) expect(await summary(loop, accept)).toBe(await summary(threads, accept))
    expect(await metric(loop, INLINE)).toBe(2)
    // The thread's store counted its two summaries as searches that waited for a thread.
    expect(await metric(threads, INLINE)).toBe(0)
    expect(await metric(threads, WAITED)).toBe(2)
    expect(await metric(loop, WAITED)).toBe(2)
  })

  it('sends a summary past either bound, or every one with the bound at 0, to a thread', async () => {
    const reference = await appOn({reader: false})
    const expected = await summary(reference)
    const tokens = ['metformin', 'chest', 'pain', 'the']
    const {rows, docs} = await statistics(reference.store, tokens, ...YEAR)
    expect(rows).toBeGreaterThan(10)
    for (const limits of [{inlineSummaryPostings: docs - 1}, {inlineSummaryRows: rows - 1}, {inlineSummaryPostings: 0}]) {
      const ctx = await appOn({reader: true, limits})
      expect(await summary(ctx)).toBe(expected)
      expect(await metric(ctx, INLINE)).toBe(0)
    }
    // At the bounds exactly, it runs on the loop.
    const atBounds = await appOn({reader: true, limits: {inlineSummaryPostings: docs, inlineSummaryRows: rows}})
    expect(await summary(atBounds)).toBe(expected)
    expect(await metric(atBounds, INLINE)).toBe(1)
  })
})

describe.skipIf(onPostgres)('isLightSummary', () => {
  let store: Store | undefined
  afterEach(async () => {
    await store?.close()
    store = undefined
  })

  it('reads only the days the window touches, and every token once', async () => {
    store = await openStore({file: ':memory:'})
    await seedPosts(store.db, SMALL)
    // From mid-March to mid-June, ragged ends included: the decision counts their whole days.
    const start = '2025-03-15T12:00:00.000Z'
    const end = '2025-06-15T08:30:00.000Z'
    const {rows, docs} = await statistics(store, ['the', 'chest', 'pain'], start, end)
    const whole = await statistics(store, ['the', 'chest', 'pain'], ...YEAR)
    expect(docs).toBeLessThan(whole.docs)
    const search = {terms: ['the', 'chest pain', 'pain'], tokens: [['the'], ['chest', 'pain'], ['pain']], start, end}
    const light = (maxPostings: number, maxRows: number) => isLightSummary(store!.db, search, {maxPostings, maxRows})
    expect(await light(docs, rows)).toBe(true)
    expect(await light(docs - 1, rows)).toBe(false)
    expect(await light(docs, rows - 1)).toBe(false)
  })
})
