import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {updateApiKey} from '../../../src/interfaces/conversations/keys.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {CORPUS} from './fixtures.js'
import {clientWithKey, JSON_TYPE, query} from './helpers.js'
import {writesSettled} from '../../../src/store/transactions.js'

// What each call costs its key, as the caller reads it: data_calls_remaining in every answer, the
// 429 once none are left, Retry-After to the whole second, and the call's record. A summary
// costs no data call; a data call costs exactly one, counted when it is answered.

const WINDOW = query(['chest pain'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')

describe('what a call is charged', () => {
  let ctx: TestContext
  let apiKey: string
  let keyId: string
  beforeEach(async () => {
    ctx = await freshApp()
    await importPosts(ctx.db, CORPUS)
    const made = await clientWithKey(ctx, {data_calls: 3})
    apiKey = made.key.api_key
    keyId = made.key.id
  })
  afterEach(async () => ctx.store.close())

  const call = (method: 'summary' | 'data') => ctx.app.request(`/conversations/${method}?${WINDOW}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})

  async function remaining(method: 'summary' | 'data'): Promise<number> {
    const res = await call(method)
    expect(res.status).toBe(200)
    const body = await res.json()
    // Every answer counts the same: "chest pain" in 2025 is four times in post 1 and once in comment 21.
    expect(body.summary.terms).toEqual([{term: 'chest pain', matches: 5, posts: 1, comments: 1}])
    return body.data_calls_remaining
  }

  it('reports the calls left in every answer: a data call takes one, a summary none', async () => {
    expect(await remaining('summary')).toBe(3)
    expect(await remaining('data')).toBe(2)
    expect(await remaining('summary')).toBe(2)
    expect(await remaining('data')).toBe(1)
    expect(await remaining('data')).toBe(0)
    expect(await remaining('summary')).toBe(0)
    expect((await call('data')).status).toBe(429)
    // The refused call cost nothing more, and the operator's view agrees with the caller's.
    expect((await updateApiKey(ctx.db, keyId, {}, ctx.clock.now())).data_calls_remaining).toBe(0)
    expect(await remaining('summary')).toBe(0)
  })

  it('counts spent data calls for the operator: not a HEAD, not a refused call, not a summary', async () => {
    const spent = async () => {
      const text = await (await ctx.app.request('/metrics')).text()
      return Number(/^medpanel_search_data_calls_total (\S+)$/m.exec(text)?.[1])
    }
    expect(await spent()).toBe(0)
    const head = await ctx.app.request(`/conversations/data?${WINDOW}`, {method: 'HEAD', headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(head.status).toBe(200)
    await remaining('summary')
    expect(await spent()).toBe(0)
    for (let i = 0; i < 3; i++) await remaining('data')
    expect((await call('data')).status).toBe(429)
    expect(await spent()).toBe(3)
  })

  it('records each answered call once, with its method and query', async () => {
    await remaining('summary')
    await remaining('data')
    // A summary's record is written after its answer.
    await writesSettled(ctx.db)
    const rows = await ctx.db.selectFrom('conversation_calls').select(['key_id', 'method', 'query']).orderBy('method', 'desc').execute()
    const echo = JSON.stringify({start: '2025-01-01T00:00:00Z', end: '2025-12-31T23:59:59Z', terms: ['chest pain']})
    expect(rows).toEqual([
      {key_id: keyId, method: 'summary', query: echo},
      {key_id: keyId, method: 'data', query: echo},
    ])
  })

  it('rounds Retry-After up to the next whole second of the renewal', async () => {
    await updateApiKey(ctx.db, keyId, {data_calls: 1, renew_days: 1}, ctx.clock.now())
    expect(await remaining('data')).toBe(0)
    // 3,600.4 s into a one-day period: 82,799.6 s are left, said as 82,800.
    ctx.clock.advance(3600.4)
    const res = await call('data')
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('82800')
    // A summary in the meantime still says none are left.
    expect(await remaining('summary')).toBe(0)
    // Renewed: the whole allowance again, less the call that reads it.
    ctx.clock.advance(82_800)
    expect(await remaining('summary')).toBe(1)
    expect(await remaining('data')).toBe(0)
  })
})
