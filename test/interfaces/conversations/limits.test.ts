import {afterEach, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {conversationLimits, defaultLimits, type ConversationLimits} from '../../../src/interfaces/conversations/limits.js'
import {ManualClock} from '../../../src/lib/clock.js'
import type {Store} from '../../../src/store/db.js'
import type {TestContext} from '../../helpers/app.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE, xmlAsJson} from './helpers.js'
import {openMemoryStore} from '../../helpers/store.js'

async function app(limits: Partial<ConversationLimits> = {}): Promise<TestContext> {
  const store = await openMemoryStore()
  const clock = new ManualClock()
  const logs: string[] = []
  return {store, db: store.db, clock, logs, app: createApp({store, clock, log: (line) => logs.push(line), conversations: limits})}
}

describe('interface E limits', () => {
  const open: Store[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()))
  })

  it('documents its defaults', () => {
    expect(defaultLimits()).toMatchObject({
      maxTerms: 20,
      maxTermLength: 200,
      maxTermWords: 12,
      maxWindowDays: 366,
      summaryBurst: 100,
      summaryPerSecond: 1,
      maxConversations: 50_000,
      searchBudgetMs: 10_000,
      stallMs: 60_000,
      queuePerKey: 4,
    })
    // A key's share of the search threads is half of them, rounded up, whatever their number.
    expect(defaultLimits().threadsPerKey).toBe(Math.ceil(defaultLimits().threads / 2))
    expect(conversationLimits({threads: 2})).toMatchObject({threadsPerKey: 1, queue: 32})
    expect(conversationLimits({threads: 3})).toMatchObject({threadsPerKey: 2, queue: 48})
    expect(conversationLimits({threads: 4, threadsPerKey: 4}).threadsPerKey).toBe(4)
  })

  it('refuses a data call over more than 366 days with a 400 naming the limit; a summary takes any window', async () => {
    const ctx = await app()
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 1})
    const call = (method: string, start: string, end: string) =>
      ctx.app.request(`/conversations/${method}?${query(['sepsis'], start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key}})
    const res = await call('data', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00.001Z')
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      code: 400,
      message: 'the window of a data call is longer than 366 days',
      details: 'The window 2024-01-01T00:00:00Z .. 2025-01-01T00:00:00.001Z is too long for a data call; split it into windows of at most 366 days (a summary takes any window).',
    })
    expect((await call('data', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).status).toBe(200)
    // A summary over a year and a millisecond, and over a century (the demo's credentials check).
    expect((await call('summary', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00.001Z')).status).toBe(200)
    const century = await call('summary', '2000-01-01T00:00:00Z', '2100-01-01T00:00:00Z')
    expect(century.status).toBe(200)
  })

  it.each([
    ['json', JSON_TYPE],
    ['xml', XML_TYPE],
  ] as const)('limits summary calls per key with a token bucket: 429 with Retry-After (%s)', async (format, accept) => {
    const ctx = await app({summaryBurst: 3, summaryPerSecond: 0.5})
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx, {data_calls: 5})
    const other = await clientWithKey(ctx)
    const call = (method: string, apiKey = key.api_key, terms = ['sepsis']) =>
      ctx.app.request(`/conversations/${method}?${query(terms, '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {
        headers: {Accept: accept, 'X-Service-Conversation-API-Key': apiKey},
      })
    // a caller's mistakes cost nothing
    expect((await call('summary', key.api_key, ['--'])).status).toBe(400)
    for (let i = 0; i < 3; i++) expect((await call('summary')).status).toBe(200)
    const refused = await call('summary')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('2')
    const body = format === 'json' ? await refused.json() : xmlAsJson(await refused.text()).value
    expect(body).toEqual({
      code: 429,
      message: 'too many summary calls with this API key',
      details: 'A key may make 3 summary calls at once and 0.5 more per second; try again in 2 s.',
    })
    // data calls are metered by their allowance alone, and other keys have buckets of their own
    expect((await call('data')).status).toBe(200)
    expect((await call('summary', other.key.api_key)).status).toBe(200)
    ctx.clock.advance(1)
    expect((await call('summary')).status).toBe(429)
    ctx.clock.advance(1)
    expect((await call('summary')).status).toBe(200)
    expect((await call('summary')).status).toBe(429)
    ctx.clock.advance(60)
    for (let i = 0; i < 3; i++) expect((await call('summary')).status).toBe(200)
    expect((await call('summary')).status).toBe(429)
  })

  it('lets a key make its documented burst of 100 summary calls, then one a second', async () => {
    const ctx = await app()
    open.push(ctx.store)
    const {key} = await clientWithKey(ctx)
    const call = () =>
      ctx.app.request(`/conversations/summary?${query(['sepsis'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {headers: {'X-Service-Conversation-API-Key': key.api_key}})
    for (let i = 0; i < 100; i++) expect((await call()).status).toBe(200)
    const refused = await call()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    ctx.clock.advance(1)
    expect((await call()).status).toBe(200)
  })
})
