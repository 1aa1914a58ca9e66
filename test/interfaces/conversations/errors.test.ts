import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {updateApiKey} from '../../../src/interfaces/conversations/keys.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {updateClient} from '../../../src/registry/service.js'
import {openStore} from '../../../src/schema.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {tempDir} from '../../helpers/cli.js'
import {onPostgres} from '../../helpers/store.js'
import {holdWriteLock} from '../../helpers/write-lock.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE, xmlAsJson} from './helpers.js'

const GOOD = query(['sepsis'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')

/** Reads an error answer in either format as {code, message, details}, checking the common headers. */
async function errorBody(res: Response, format: 'json' | 'xml'): Promise<{code: number; message: string; details: string}> {
  expect(res.headers.get('vary')).toBe('Accept')
  if (format === 'json') {
    expect(res.headers.get('content-type')).toBe(`${JSON_TYPE}; charset=utf-8`)
    const body = await res.json()
    expect(Object.keys(body)).toEqual(['code', 'message', 'details'])
    return body
  }
  expect(res.headers.get('content-type')).toBe(`${XML_TYPE}; charset=utf-8`)
  const {root, value} = xmlAsJson(await res.text())
  expect(root).toBe('error')
  expect(Object.keys(value)).toEqual(['code', 'message', 'details'])
  return value
}

describe.each([
  ['json', JSON_TYPE],
  ['xml', XML_TYPE],
] as const)('interface E errors in %s', (format, accept) => {
  let ctx: TestContext
  let apiKey: string
  let keyId: string
  let clientId: string

  beforeEach(async () => {
    ctx = await freshApp()
    const made = await clientWithKey(ctx, {data_calls: 1})
    apiKey = made.key.api_key
    keyId = made.key.id
    clientId = made.client.client_id
  })
  afterEach(async () => ctx.store.close())

  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    ctx.app.request(path, {method, headers: {Accept: accept, 'X-Service-Conversation-API-Key': apiKey, ...headers}})

  it.each([
    ['no terms', '?start=2025-01-01T00:00:00Z&end=2025-12-31T23:59:59Z', 'terms[] is required'],
    ['an empty term', `?${query(['  '], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, 'terms[0] is empty'],
    ['a term with a NUL character', `?${query(['heart\u0000failure'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, 'terms[0] contains a NUL character'],
    ['a term of punctuation only', `?${query(['ok', '--*'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, 'terms[1] has no letters or digits to search for'],
    ['no start', '?terms[]=sepsis&end=2025-12-31T23:59:59Z', 'start is required'],
    ['no end', '?terms[]=sepsis&start=2025-01-01T00:00:00Z', 'end is required'],
    ['a bad start', '?terms[]=sepsis&start=yesterday&end=2025-12-31T23:59:59Z', 'start is not an ISO 8601 UTC datetime: "yesterday"'],
    ['an impossible date', '?terms[]=sepsis&start=2025-02-30T00:00:00Z&end=2025-12-31T23:59:59Z', 'start is not an ISO 8601 UTC datetime: "2025-02-30T00:00:00Z"'],
    ['a date without time', '?terms[]=sepsis&start=2025-01-01&end=2025-12-31T23:59:59Z', 'start is not an ISO 8601 UTC datetime: "2025-01-01"'],
    ['reversed dates', `?${query(['sepsis'], '2025-12-31T00:00:00Z', '2025-01-01T00:00:00Z')}`, 'start is after end'],
  ])('400 for %s', async (_, search, message) => {
    for (const method of ['summary', 'data']) {
      const res = await get(`/conversations/${method}${search}`)
      expect(res.status).toBe(400)
      expect(await errorBody(res, format)).toEqual({code: 400, message, details: expect.any(String)})
    }
    // a bad request spends nothing
    expect((await updateApiKey(ctx.db, keyId, {}, ctx.clock.now())).data_calls_remaining).toBe(1)
  })

  it('401 without a key, with an unknown key, a revoked key, or an expired client', async () => {
    const noKey = await ctx.app.request(`/conversations/summary?${GOOD}`, {headers: {Accept: accept}})
    expect(noKey.status).toBe(401)
    expect(await errorBody(noKey, format)).toMatchObject({code: 401, message: 'an API key is required'})

    const unknown = await get(`/conversations/data?${GOOD}`, {'X-Service-Conversation-API-Key': 'mpk_not-a-real-key'})
    expect(unknown.status).toBe(401)
    expect(await errorBody(unknown, format)).toMatchObject({code: 401, message: 'the API key is not valid'})

    await updateApiKey(ctx.db, apiKey, {revoke: true}, ctx.clock.now())
    const revoked = await get(`/conversations/summary?${GOOD}`)
    expect(revoked.status).toBe(401)
    expect(await errorBody(revoked, format)).toMatchObject({code: 401, message: 'the API key has been revoked'})

    await updateApiKey(ctx.db, apiKey, {revoke: false}, ctx.clock.now())
    await updateClient(ctx.store, clientId, {expire: true}, ctx.clock.now())
    const expired = await get(`/conversations/summary?${GOOD}`)
    expect(expired.status).toBe(401)
    expect(await errorBody(expired, format)).toMatchObject({code: 401, message: "the API key's client account has expired"})
  })

  it('402 once the subscription has ended', async () => {
    await updateApiKey(ctx.db, keyId, {subscription_ends: '2026-01-15T12:00:01Z'}, ctx.clock.now())
    expect((await get(`/conversations/summary?${GOOD}`)).status).toBe(200)
    ctx.clock.advance(1)
    const res = await get(`/conversations/summary?${GOOD}`)
    expect(res.status).toBe(402)
    expect(await errorBody(res, format)).toEqual({code: 402, message: 'the subscription has lapsed', details: 'The subscription of this API key ended at 2026-01-15T12:00:01Z.'})
  })

  it('403 for a method the key may not call, or a client without the grant', async () => {
    await updateApiKey(ctx.db, keyId, {methods: ['summary']}, ctx.clock.now())
    expect((await get(`/conversations/summary?${GOOD}`)).status).toBe(200)
    const res = await get(`/conversations/data?${GOOD}`)
    expect(res.status).toBe(403)
    expect(await errorBody(res, format)).toEqual({code: 403, message: 'this API key may not call data', details: 'Allowed methods for this key: summary.'})

    await updateClient(ctx.store, clientId, {grants: ['balance']}, ctx.clock.now())
    const noGrant = await get(`/conversations/summary?${GOOD}`)
    expect(noGrant.status).toBe(403)
    expect(await errorBody(noGrant, format)).toMatchObject({code: 403, message: "the API key's client may not use the conversation interface"})
  })

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('405 for %s, with Allow', async (method) => {
    for (const path of ['summary', 'data']) {
      const res = await get(`/conversations/${path}?${GOOD}`, {}, method)
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('GET, HEAD')
      expect(await errorBody(res, format)).toMatchObject({code: 405, message: `${method} is not supported here; use GET`, details: 'Use GET.'})
    }
  })

  it('HEAD is checked like GET but spends nothing', async () => {
    const head = await get(`/conversations/data?${GOOD}`, {}, 'HEAD')
    expect(head.status).toBe(200)
    expect(head.headers.get('vary')).toBe('Accept')
    expect(await head.text()).toBe('')
    expect((await get(`/conversations/data?${GOOD}`)).status).toBe(200)
    expect((await get(`/conversations/data?${GOOD}`, {}, 'HEAD')).status).toBe(429)
  })

  it('429 when no data calls are left; summary calls spend nothing and still work', async () => {
    for (let i = 0; i < 3; i++) expect((await get(`/conversations/summary?${GOOD}`)).status).toBe(200)
    const first = await get(`/conversations/data?${GOOD}`)
    expect(first.status).toBe(200)
    const second = await get(`/conversations/data?${GOOD}`)
    expect(second.status).toBe(429)
    expect(second.headers.get('retry-after')).toBeNull()
    expect(await errorBody(second, format)).toEqual({code: 429, message: 'no data calls are left on this API key', details: 'Ask for a larger allowance.'})
    expect((await get(`/conversations/summary?${GOOD}`)).status).toBe(200)
  })

  it('429 carries Retry-After when the allowance renews, and calls work again after it', async () => {
    await updateApiKey(ctx.db, keyId, {data_calls: 1, renew_days: 1}, ctx.clock.now())
    expect((await get(`/conversations/data?${GOOD}`)).status).toBe(200)
    ctx.clock.advance(3600)
    const res = await get(`/conversations/data?${GOOD}`)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe(String(23 * 3600))
    expect(await errorBody(res, format)).toMatchObject({code: 429, details: 'The allowance of 1 data calls renews at 2026-01-16T12:00:00Z.'})
    ctx.clock.advance(23 * 3600)
    const renewed = await get(`/conversations/data?${GOOD}`)
    expect(renewed.status).toBe(200)
  })

  it('503 when the store is unavailable', async () => {
    await ctx.store.close()
    const res = await get(`/conversations/summary?${GOOD}`)
    expect(res.status).toBe(503)
    // The store's one policy (http/error-shape.ts): a store that cannot take requests asks for 30 s.
    expect(res.headers.get('retry-after')).toBe('30')
    expect(await errorBody(res, format)).toEqual({code: 503, message: 'service temporarily unavailable', details: 'Try again shortly.'})
    ctx = await freshApp()
  })

  it('503 from a failed search gives the data call back, and logs no call', async () => {
    const {sql} = await import('kysely')
    // A part of the search gone: SQLite's per-day term statistics, PostgreSQL's phrase counter.
    if (onPostgres) await sql`drop function conversation_phrase_count`.execute(ctx.db)
    else await sql`drop table conversation_term_days`.execute(ctx.db)
    const res = await get(`/conversations/data?${GOOD}`)
    expect(res.status).toBe(503)
    expect(await errorBody(res, format)).toMatchObject({code: 503})
    expect((await updateApiKey(ctx.db, keyId, {}, ctx.clock.now())).data_calls_remaining).toBe(1)
    // A summary's record is written while its search runs, and taken back when the search fails.
    const summary = await get(`/conversations/summary?${GOOD}`)
    expect(summary.status).toBe(503)
    expect(await ctx.db.selectFrom('conversation_calls').select('id').execute()).toEqual([])
    expect(ctx.logs.some((line) => /no such table: conversation_term_days|function conversation_phrase_count\(.*\) does not exist/.test(line))).toBe(true)
  })

  it('404 for an unknown path under /conversations, in the same shape', async () => {
    const res = await get('/conversations/everything')
    expect(res.status).toBe(404)
    expect(await errorBody(res, format)).toMatchObject({code: 404})
  })
})

describe('content negotiation', () => {
  let ctx: TestContext
  let apiKey: string
  beforeEach(async () => {
    ctx = await freshApp()
    apiKey = (await clientWithKey(ctx)).key.api_key
  })
  afterEach(async () => ctx.store.close())

  const withAccept = (accept: string | undefined, path = `/conversations/summary?${GOOD}`) =>
    ctx.app.request(path, {headers: {...(accept === undefined ? {} : {Accept: accept}), 'X-Service-Conversation-API-Key': apiKey}})

  it.each([
    [undefined, JSON_TYPE],
    ['*/*', JSON_TYPE],
    [JSON_TYPE, JSON_TYPE],
    [XML_TYPE, XML_TYPE],
    [`${JSON_TYPE};q=0.5, ${XML_TYPE}`, XML_TYPE],
    [`text/html, ${XML_TYPE};q=0.9, */*;q=0.1`, XML_TYPE],
    [`APPLICATION/VND.SERVICE-V1+XML`, XML_TYPE],
  ])('Accept %s answers %s', async (accept, type) => {
    const res = await withAccept(accept)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${type}; charset=utf-8`)
    expect(res.headers.get('vary')).toBe('Accept')
  })

  it.each(['application/json', 'application/xml', 'text/html', `${XML_TYPE};q=0`])('Accept %s is 406 with a JSON error body', async (accept) => {
    for (const path of [`/conversations/summary?${GOOD}`, `/conversations/data?${GOOD}`, '/conversations/summary']) {
      const res = await withAccept(accept, path)
      expect(res.status).toBe(406)
      expect(await errorBody(res, 'json')).toMatchObject({code: 406, message: 'the Accept header names no format this interface serves'})
    }
  })
})

describe('spending the allowance', () => {
  // One process, one connection: the group writer runs these in order whatever BEGIN it issues.
  it('lets exactly one of two concurrent data calls through when one call is left', async () => {
    const ctx = await freshApp()
    const {key} = await clientWithKey(ctx, {data_calls: 1})
    const calls = await Promise.all([0, 1].map(() => ctx.app.request(`/conversations/data?${GOOD}`, {headers: {'X-Service-Conversation-API-Key': key.api_key}})))
    expect(calls.map((r) => r.status).sort()).toEqual([200, 429])
    await ctx.store.close()
  })

  // Two connections on one store file, in two processes: only the write lock taken up front
  // (BEGIN IMMEDIATE) makes a data call wait for the other process's transaction and then read
  // what it committed. A deferred BEGIN reads the old count, cannot upgrade to a writer while the
  // other holds the lock, and answers 503.
  it('waits for another process spending the last call on the same store file, then answers 429', async () => {
    const file = join(tempDir(), 'race.db')
    const store = await openStore({file})
    const clock = new ManualClock()
    const logs: string[] = []
    const ctx: TestContext = {store, db: store.db, clock, app: createApp({store, clock, log: (line) => logs.push(line)}), logs}
    try {
      const {key} = await clientWithKey(ctx, {data_calls: 1})
      // The other process spends the key's last call and keeps its transaction open for 500 ms.
      const other = await holdWriteLock(file, [`update conversation_api_keys set data_calls_used = data_calls_used + 1 where id = '${key.id}'`], 500)
      const res = await ctx.app.request(`/conversations/data?${GOOD}`, {headers: {'X-Service-Conversation-API-Key': key.api_key}})
      expect(await other.done, other.stderr()).toBe(0)
      expect(res.status, await res.clone().text()).toBe(429)
      expect(await errorBody(res, 'json')).toMatchObject({code: 429, message: 'no data calls are left on this API key'})
      expect((await updateApiKey(ctx.db, key.id, {}, clock.now())).data_calls_remaining).toBe(0)
    } finally {
      await store.close()
    }
  })
})
