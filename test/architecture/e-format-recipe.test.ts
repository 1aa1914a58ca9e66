import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createApp, SERVED_INTERFACES} from '../../src/app.js'
import type {AnswerFormat} from '../../src/interfaces/conversations/format.js'
import {FORMATS} from '../../src/interfaces/conversations/formats.js'
import {importPosts} from '../../src/interfaces/conversations/import.js'
import {conversationsInterface, conversationsServed} from '../../src/interfaces/conversations/routes.js'
import {threadJob} from '../../src/interfaces/conversations/search-protocol.js'
import type {SummaryResult} from '../../src/interfaces/conversations/views.js'
import {ManualClock} from '../../src/lib/clock.js'
import type {TestContext} from '../helpers/app.js'
import {openTestStore} from '../helpers/store.js'
import {CORPUS} from '../interfaces/conversations/fixtures.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE} from '../interfaces/conversations/helpers.js'

/*
 * docs/architecture.md's recipe for adding an answer format to interface E, followed in a test:
 * a throwaway CSV format is one object (step 1, its own file in src), added to the list of
 * formats (step 2, formats.ts; here the list handed to the routes, as the interface recipe hands
 * its interface to the app). Nothing else changes, and E must answer in it: negotiated from
 * Accept, summary and data answers (the data answer streamed page by page from the real search),
 * its errors, its place in /openapi.json and in the 406's advice; JSON and XML as before.
 */

const CSV_TYPE = 'application/vnd.service-v1+csv'

const cell = (text: string | number) => `"${String(text).replaceAll('"', '""')}"`

const summaryCsv = (result: SummaryResult) =>
  ['term,matches,posts,comments\n', ...result.summary.terms.map((t) => `${cell(t.term)},${t.matches},${t.posts},${t.comments}\n`)].join('')

/** Step 1: the format, everything E needs to answer in it (see src/interfaces/conversations/format.ts). */
const csvFormat: AnswerFormat = {
  name: 'csv',
  label: 'CSV',
  mediaType: CSV_TYPE,
  summary: summaryCsv,
  head: (result) => `${summaryCsv(result)}post,matched_terms,comments\n`,
  page: (conversations) => conversations.map((c) => `${c.post.id},${cell(c.matched_terms.join('|'))},${c.post.comments.length}\n`).join(''),
  tail: (conversations) => `# ${conversations} conversations\n`,
  error: (body) => `code,message\n${body.code},${cell(body.message)}\n`,
}

const WINDOW = {start: '2025-01-01T00:00:00Z', end: '2025-12-31T23:59:59Z'}
const TERMS = ['chest pain', 'Pain', 'metformin']

describe('the recipe for adding an answer format to interface E', () => {
  let ctx: TestContext
  let apiKey: string

  beforeAll(async () => {
    const store = await openTestStore()
    const clock = new ManualClock()
    // Step 2: the list with the new format in it, served in place of the shipped one.
    const served = SERVED_INTERFACES.map((one) => (one === conversationsInterface ? conversationsServed([...FORMATS, csvFormat]) : one))
    const app = createApp({store, clock, log: () => {}, metrics: false}, served)
    ctx = {store, db: store.db, clock, app, logs: []}
    apiKey = (await clientWithKey(ctx, {data_calls: 10})).key.api_key
    await importPosts(ctx.db, {conversations: CORPUS})
  })
  afterAll(async () => {
    await ctx?.store.close()
  })

  const call = (method: string, accept: string, key: string | null = apiKey) =>
    ctx.app.request(`/conversations/${method}?${query(TERMS, WINDOW.start, WINDOW.end)}`, {headers: {Accept: accept, ...(key ? {'X-Service-Conversation-API-Key': key} : {})}})

  it('answers a summary in the new format, the same counts as in JSON', async () => {
    const json = (await (await call('summary', JSON_TYPE)).json()) as SummaryResult
    const res = await call('summary', `${CSV_TYPE}, ${JSON_TYPE};q=0.5`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${CSV_TYPE}; charset=utf-8`)
    expect(res.headers.get('vary')).toBe('Accept')
    expect(await res.text()).toBe(summaryCsv(json))
  })

  it('streams a data answer in the new format: head, the real search pages, tail', async () => {
    const json = (await (await call('data', JSON_TYPE)).json()) as SummaryResult & {conversations: {matched_terms: string[]; post: {id: number; comments: unknown[]}}[]}
    expect(json.conversations.length).toBeGreaterThan(0)
    const res = await call('data', CSV_TYPE)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${CSV_TYPE}; charset=utf-8`)
    const rows = json.conversations.map((c) => `${c.post.id},${cell(c.matched_terms.join('|'))},${c.post.comments.length}\n`).join('')
    expect(await res.text()).toBe(`${summaryCsv(json)}post,matched_terms,comments\n${rows}# ${json.conversations.length} conversations\n`)
  })

  it('answers its errors in the new format, and names it in the 406', async () => {
    const refused = await call('summary', CSV_TYPE, null)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('content-type')).toBe(`${CSV_TYPE}; charset=utf-8`)
    expect(await refused.text()).toBe('code,message\n401,"an API key is required"\n')

    const unacceptable = await call('summary', 'text/html')
    expect(unacceptable.status).toBe(406)
    expect(unacceptable.headers.get('content-type')).toBe(`${JSON_TYPE}; charset=utf-8`)
    expect(((await unacceptable.json()) as {details: string}).details).toBe(`Accept ${JSON_TYPE}, ${XML_TYPE} or ${CSV_TYPE}.`)
  })

  it('publishes it in /openapi.json beside JSON and XML', async () => {
    const doc = (await (await ctx.app.request('/openapi.json')).json()) as {
      paths: Record<string, {get: {responses: Record<string, {description: string; content: Record<string, {schema: {description?: string}}>}>}}>
    }
    const responses = doc.paths['/conversations/data']!.get.responses
    expect(Object.keys(responses['200']!.content)).toEqual([JSON_TYPE, XML_TYPE, CSV_TYPE])
    expect(responses['200']!.description).toBe(`Data result in JSON (${JSON_TYPE}), XML (${XML_TYPE}) or CSV (${CSV_TYPE}), chosen by Accept`)
    expect(responses['401']!.content[CSV_TYPE]!.schema.description).toBe('The same document in CSV')
    expect(Object.keys(responses['406']!.content)).toEqual([JSON_TYPE])
  })

  it('leaves JSON the default and XML as it was', async () => {
    const plain = await call('summary', '*/*')
    expect(plain.headers.get('content-type')).toBe(`${JSON_TYPE}; charset=utf-8`)
    const xml = await call('summary', XML_TYPE)
    expect(xml.headers.get('content-type')).toBe(`${XML_TYPE}; charset=utf-8`)
    expect(await xml.text()).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><call>/)
  })

  it('keeps a format the list does not hold away from the search threads, and the service as shipped without it', async () => {
    const job = {search: {terms: ['a'], tokens: [['a']], start: WINDOW.start, end: WINDOW.end}, pageSize: 10, maxConversations: 10}
    expect(() => threadJob({...job, format: csvFormat})).toThrow('the CSV format is not in formats.ts, so no search thread can write it')
    expect(threadJob({...job, format: FORMATS[1]}).format).toBe('xml')

    const shipped = createApp({store: ctx.store, clock: ctx.clock, log: () => {}, metrics: false})
    const res = await shipped.request(`/conversations/summary?${query(TERMS, WINDOW.start, WINDOW.end)}`, {headers: {Accept: CSV_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(res.status).toBe(406)
  })
})
