import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {type author, CORPUS} from './fixtures.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE, xmlAsJson} from './helpers.js'
import {writesSettled} from '../../../src/store/transactions.js'

const WINDOW = {start: '2025-01-01T00:00:00Z', end: '2025-12-31T23:59:59Z'}

describe('conversation search over a hand-counted corpus', () => {
  let ctx: TestContext
  let apiKey: string

  beforeEach(async () => {
    ctx = await freshApp()
    apiKey = (await clientWithKey(ctx, {data_calls: 50})).key.api_key
    expect(await importPosts(ctx.db, {conversations: CORPUS})).toEqual({posts: 4, comments: 5, authors: 4, replaced_posts: 0})
  })
  afterEach(async () => ctx.store.close())

  const call = (method: string, terms: string[], type = JSON_TYPE, window = WINDOW) =>
    ctx.app.request(`/conversations/${method}?${query(terms, window.start, window.end)}`, {headers: {Accept: type, 'X-Service-Conversation-API-Key': apiKey}})

  const expectedSummary = {
    query: {start: '2025-01-01T00:00:00Z', end: '2025-12-31T23:59:59Z', terms: ['chest pain', 'Pain', 'metformin']},
    summary: {
      terms: [
        {term: 'chest pain', matches: 5, posts: 1, comments: 1},
        {term: 'Pain', matches: 6, posts: 1, comments: 2},
        {term: 'metformin', matches: 3, posts: 0, comments: 2},
      ],
      uniques: {posts: 1, comments: 3},
    },
  }

  it('counts occurrences, posts, comments and uniques exactly (JSON)', async () => {
    const res = await call('summary', ['chest pain', 'Pain', 'metformin'])
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${JSON_TYPE}; charset=utf-8`)
    expect(res.headers.get('vary')).toBe('Accept')
    const body = await res.json()
    expect(Object.keys(body)).toEqual(['id', 'data_calls_remaining', 'query', 'summary'])
    expect(body).toEqual({id: expect.stringMatching(/^[0-9a-f-]{36}$/), data_calls_remaining: 50, ...expectedSummary})
  })

  it('gives the same counts in XML, which parses back to the JSON form', async () => {
    const res = await call('summary', ['chest pain', 'Pain', 'metformin'], XML_TYPE)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${XML_TYPE}; charset=utf-8`)
    const xml = await res.text()
    expect(xml).toContain('<data-calls-remaining>50</data-calls-remaining>')
    expect(xml).toContain('<query-terms><query-term>chest pain</query-term>')
    const {root, value} = xmlAsJson(xml)
    expect(root).toBe('call')
    expect(value).toEqual({id: expect.stringMatching(/^[0-9a-f-]{36}$/), data_calls_remaining: 50, ...expectedSummary})
  })

  const expectedConversations = () => {
    type P = (typeof CORPUS)[number]['post']
    const [p1, p2, p3] = CORPUS.map((c) => c.post) as [P, P, P, P]
    const authorOut = (a: ReturnType<typeof author>) => a
    const commentOut = (c: P['comments'][number]) => ({id: c.id, author: authorOut(c.author), published_at: c.published_at, content: c.content, helpful_count: c.helpful_count})
    const postOut = (p: P, published: string, rating: number, solved: string | null) => ({
      id: p.id,
      author: authorOut(p.author),
      published_at: published,
      rating,
      iconsult: p.iconsult,
      solved_at: solved,
      title: p.title,
      content: p.content,
      comments: p.comments.map(commentOut),
    })
    return [
      // ordered by the post's published_at; post 3 is outside the window but its comment is in it
      {matched_terms: ['Pain'], post: postOut(p3!, '2024-11-01T00:00:00Z', 0, null)},
      {matched_terms: ['chest pain', 'Pain', 'metformin'], post: postOut(p1!, '2025-03-01T10:00:00.250Z', 4.25, '2025-03-02T11:00:00Z')},
      {matched_terms: ['chest pain', 'Pain', 'metformin'], post: postOut(p2!, '2025-06-15T12:00:00Z', 3, null)},
    ]
  }

  it('returns every matched conversation with all its comments (JSON), spending one data call', async () => {
    const res = await call('data', ['chest pain', 'Pain', 'metformin'])
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(Object.keys(body)).toEqual(['id', 'data_calls_remaining', 'query', 'summary', 'conversations'])
    expect(body.data_calls_remaining).toBe(49)
    expect({query: body.query, summary: body.summary}).toEqual(expectedSummary)
    expect(body.conversations).toEqual(expectedConversations())
  })

  it('returns the same conversations in XML, title and content as CDATA', async () => {
    const res = await call('data', ['chest pain', 'Pain', 'metformin'], XML_TYPE)
    const xml = await res.text()
    expect(xml).toContain('<title><![CDATA[Chest pain after exercise]]></title>')
    expect(xml).toContain('<content><![CDATA[Metformin first, then metformin XR.]]></content>')
    expect(xml).toContain('<country-of-practice>GB</country-of-practice>')
    expect(xml).toContain('<post-badge>true</post-badge>')
    expect(xml).toContain('<matched-terms><matched-term>Pain</matched-term></matched-terms>')
    const {root, value} = xmlAsJson(xml)
    expect(root).toBe('call')
    expect(value.data_calls_remaining).toBe(49)
    expect({query: value.query, summary: value.summary}).toEqual(expectedSummary)
    expect(value.conversations).toEqual(expectedConversations())
  })

  it('searches FTS5 syntax characters literally', async () => {
    const terms = ['"stop"', 'NEAR(a b)', 'OR', 'star*', 'a -b', '(now)', '"unbalanced', 'NOT']
    const res = await call('summary', terms)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.summary.terms).toEqual([
      {term: '"stop"', matches: 1, posts: 1, comments: 0},
      {term: 'NEAR(a b)', matches: 1, posts: 1, comments: 0},
      {term: 'OR', matches: 3, posts: 2, comments: 0},
      {term: 'star*', matches: 1, posts: 1, comments: 0},
      {term: 'a -b', matches: 2, posts: 1, comments: 0},
      {term: '(now)', matches: 1, posts: 1, comments: 0},
      {term: '"unbalanced', matches: 0, posts: 0, comments: 0},
      {term: 'NOT', matches: 1, posts: 1, comments: 0},
    ])
    // "or" is in post 1 ("Chest-pain or chest pain") and twice in post 4
    expect(body.summary.uniques).toEqual({posts: 2, comments: 0})
  })

  it('splits "]]>" across CDATA sections so the title survives the XML form', async () => {
    const res = await call('data', ['stop'], XML_TYPE)
    const xml = await res.text()
    expect(xml).toContain('<![CDATA[He said "stop" (now) - OR * NOT ]]]]><![CDATA[> end]]>')
    const post = xmlAsJson(xml).value.conversations[0].post
    expect(post.title).toBe('He said "stop" (now) - OR * NOT ]]> end')
    expect(post.comments).toEqual([])
    expect(post.solved_at).toBeNull()
    expect(xml).toContain('<solved-at/>')
  })

  it('answers a search that matches nothing with zero counts and no conversations, in both formats', async () => {
    const json = await (await call('data', ['hemochromatosis'])).json()
    expect(json.summary).toEqual({terms: [{term: 'hemochromatosis', matches: 0, posts: 0, comments: 0}], uniques: {posts: 0, comments: 0}})
    expect(json.conversations).toEqual([])
    const xml = await (await call('data', ['hemochromatosis'], XML_TYPE)).text()
    const {value} = xmlAsJson(xml)
    expect({summary: value.summary, conversations: value.conversations}).toEqual({summary: json.summary, conversations: []})
  })

  it('drops characters XML cannot carry from the XML form only', async () => {
    const odd = structuredClone(CORPUS[3]!)
    odd.post.id = 5
    odd.post.content = 'bell\u0007 stop \uD800 tab\tnewline\n'
    await importPosts(ctx.db, [odd])
    const json = await (await call('data', ['stop'])).json()
    expect(json.conversations[1].post.content).toBe('bell\u0007 stop \uFFFD tab\tnewline\n')
    const xml = await (await call('data', ['stop'], XML_TYPE)).text()
    expect(xmlAsJson(xml).value.conversations[1].post.content).toBe('bell stop \uFFFD tab\tnewline\n')
  })

  it('is described in the OpenAPI document', async () => {
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as {paths: Record<string, {get?: {security?: unknown}}>}
    expect(doc.paths['/conversations/summary']?.get?.security).toEqual([{conversationApiKey: []}])
    expect(doc.paths['/conversations/data']?.get).toBeDefined()
  })

  it('counts documents by their own published_at, window ends inclusive', async () => {
    const edge = {start: '2025-12-31T23:59:59Z', end: '2025-12-31T23:59:59Z'}
    const body = await (await call('summary', ['stop', 'pain'], JSON_TYPE, edge)).json()
    expect(body.summary.terms).toEqual([
      {term: 'stop', matches: 1, posts: 1, comments: 0},
      {term: 'pain', matches: 0, posts: 0, comments: 0},
    ])
    const early = await (await call('summary', ['pain', 'chest pain'], JSON_TYPE, {start: '2024-01-01T00:00:00Z', end: '2024-12-31T23:59:59Z'})).json()
    expect(early.summary.terms).toEqual([
      {term: 'pain', matches: 3, posts: 1, comments: 0},
      {term: 'chest pain', matches: 1, posts: 1, comments: 0},
    ])
  })

  it('honours milliseconds at both ends of the window', async () => {
    const count = async (start: string, end: string) => (await (await call('summary', ['exercise'], JSON_TYPE, {start, end})).json()).summary.terms[0].posts
    // post 1 was published at 2025-03-01T10:00:00.250Z
    expect(await count('2025-03-01T10:00:00.250Z', '2025-03-01T10:00:00.250Z')).toBe(1)
    expect(await count('2025-03-01T10:00:00.251Z', '2025-03-01T10:00:01Z')).toBe(0)
    expect(await count('2025-03-01T10:00:00Z', '2025-03-01T10:00:00.249Z')).toBe(0)
    expect(await count('2025-03-01T11:00:00+01:00', '2025-03-01T10:00:00.999Z')).toBe(1)
  })

  it('accepts the parameter name percent-encoded (terms%5B%5D), and repeated terms once', async () => {
    const url = `/conversations/summary?terms%5B%5D=chest%20pain&terms%5b%5d=Pain&terms%5B%5D=metformin&terms%5B%5D=metformin&start=2025-01-01T00%3A00%3A00Z&end=2025-12-31T23:59:59Z`
    const res = await ctx.app.request(url, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(res.status).toBe(200)
    const body = await res.json()
    expect({query: body.query, summary: body.summary}).toEqual(expectedSummary)
  })

  it('gives every call a new id and logs it', async () => {
    const ids = new Set<string>()
    for (let i = 0; i < 3; i++) ids.add((await (await call('summary', ['pain'])).json()).id)
    expect(ids.size).toBe(3)
    // A summary's record is written after its answer.
    await writesSettled(ctx.db)
    const logged = await ctx.db.selectFrom('conversation_calls').select('id').execute()
    expect(new Set(logged.map((r) => r.id))).toEqual(ids)
  })

  it('writes comment times as YYYY-MM-DDTHH:MM:SSZ even when stored with milliseconds, in both formats', async () => {
    const post = structuredClone(CORPUS[2]!)
    post.post.comments[1]!.published_at = '2025-02-02T00:00:00.750Z'
    await importPosts(ctx.db, [post])
    const json = await (await call('data', ['Great point'])).json()
    expect(json.conversations[0].post.comments.map((c: {published_at: string}) => c.published_at)).toEqual(['2025-02-01T00:00:00Z', '2025-02-02T00:00:00Z'])
    const xml = await (await call('data', ['Great point'], XML_TYPE)).text()
    expect(xml).toContain('<published-at>2025-02-02T00:00:00Z</published-at>')
    expect(xml).not.toContain('00:00:00.750Z')
  })

  it('keeps the index in step when posts are replaced or removed', async () => {
    const changed = structuredClone(CORPUS[1]!)
    changed.post.content = 'Now it says metformin twice: metformin.'
    changed.post.comments = []
    expect(await importPosts(ctx.db, [changed])).toMatchObject({posts: 1, replaced_posts: 1})
    const body = await (await call('summary', ['metformin', 'chest pain'])).json()
    expect(body.summary.terms).toEqual([
      {term: 'metformin', matches: 4, posts: 1, comments: 1},
      {term: 'chest pain', matches: 4, posts: 1, comments: 0},
    ])
  })
})
