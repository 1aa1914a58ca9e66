import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {author} from './fixtures.js'
import {clientWithKey, JSON_TYPE, query} from './helpers.js'

// The edges of what a summary call accepts and counts: how many terms, how long, how many words,
// which terms are one and the same, and a window whose two ends are the same instant. Each limit
// is written out as a number (the documented defaults), and each side of it is tried.

const YEAR = ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'] as const

describe('a summary call at the edges of its query', () => {
  let ctx: TestContext
  let apiKey: string
  beforeEach(async () => {
    ctx = await freshApp()
    apiKey = (await clientWithKey(ctx, {data_calls: 2})).key.api_key
    await importPosts(ctx.db, [
      {
        post: {
          id: 1,
          author: author('doc-1'),
          published_at: '2025-03-01T10:00:00.250Z',
          rating: 1,
          iconsult: false,
          solved_at: null,
          title: 'Pain',
          content: 'pain and more pain',
          comments: [],
        },
      },
    ])
  })
  afterEach(async () => ctx.store.close())

  const call = (terms: string[], start: string = YEAR[0], end: string = YEAR[1], method = 'summary') =>
    ctx.app.request(`/conversations/${method}?${query(terms, start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})

  async function refused(res: Response) {
    expect(res.status).toBe(400)
    return (await res.json()) as {code: number; message: string; details: string}
  }

  it('takes a term of 200 characters and refuses one of 201', async () => {
    expect((await call(['a'.repeat(200)])).status).toBe(200)
    expect(await refused(await call(['pain', 'b'.repeat(201)]))).toMatchObject({code: 400, message: 'terms[1] is longer than 200 characters'})
    // Spaces around a term are not part of it.
    expect((await call([` ${'c'.repeat(200)} `])).status).toBe(200)
  })

  it('takes 20 distinct terms and refuses 21; a repeated term counts once', async () => {
    const twenty = Array.from({length: 20}, (_, i) => `term${i}`)
    const ok = await call(twenty)
    expect(ok.status).toBe(200)
    expect((await ok.json()).query.terms).toEqual(twenty)
    expect(await refused(await call([...twenty, 'term20']))).toMatchObject({message: 'at most 20 distinct terms may be sent in one call'})
    // Twenty-two sent, twenty distinct once trimmed: taken, each answered once, in first-seen order.
    const repeated = await call([...twenty, 'term0', ' term19 '])
    expect(repeated.status).toBe(200)
    expect((await repeated.json()).summary.terms.map((t: {term: string}) => t.term)).toEqual(twenty)
  })

  it('answers a term sent twice once, with its counts', async () => {
    const res = await call(['pain', ' pain', 'pain '])
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.query.terms).toEqual(['pain'])
    expect(body.summary).toEqual({terms: [{term: 'pain', matches: 3, posts: 1, comments: 0}], uniques: {posts: 1, comments: 0}})
  })

  it('takes a phrase of 12 words and refuses one of 13', async () => {
    const words = (n: number) => Array.from({length: n}, (_, i) => `w${i}`).join(' ')
    expect((await call([words(12)])).status).toBe(200)
    expect(await refused(await call([words(13)]))).toEqual({code: 400, message: 'terms[0] has more than 12 words', details: 'Shorten the phrase.'})
  })

  it('says which term is punctuation alone', async () => {
    expect(await refused(await call(['pain', '--*']))).toEqual({
      code: 400,
      message: 'terms[1] has no letters or digits to search for',
      details: 'Term "--*": punctuation alone never matches a word.',
    })
  })

  it('counts a document published at the one instant of a window whose start is its end', async () => {
    const at = '2025-03-01T10:00:00.250Z'
    const one = await call(['pain'], at, at)
    expect(one.status).toBe(200)
    const body = await one.json()
    expect(body.query).toEqual({start: at, end: at, terms: ['pain']})
    expect(body.summary.terms).toEqual([{term: 'pain', matches: 3, posts: 1, comments: 0}])
    // A millisecond either side holds nothing.
    for (const [start, end] of [
      ['2025-03-01T10:00:00.251Z', '2025-03-01T10:00:01Z'],
      ['2025-03-01T10:00:00Z', '2025-03-01T10:00:00.249Z'],
    ] as const) {
      expect((await (await call(['pain'], start, end)).json()).summary.terms).toEqual([{term: 'pain', matches: 0, posts: 0, comments: 0}])
    }
    // One millisecond later than the start is still refused, with both ends named.
    expect(await refused(await call(['pain'], '2025-03-01T10:00:00.251Z', at))).toEqual({
      code: 400,
      message: 'start is after end',
      details: 'The window 2025-03-01T10:00:00.251Z .. 2025-03-01T10:00:00.250Z is empty; swap start and end.',
    })
  })

  it('reads start and end with spaces around them or an offset, and echoes them in UTC', async () => {
    const res = await call(['pain'], ' 2025-03-01T12:00:00+02:00 ', '2025-03-01T10:00:00.250Z  ')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.query).toEqual({start: '2025-03-01T10:00:00Z', end: '2025-03-01T10:00:00.250Z', terms: ['pain']})
    expect(body.summary.terms[0]).toMatchObject({posts: 1})
  })

  it('tells a caller how to write the query, and quotes at most 64 characters of a bad datetime', async () => {
    const how = 'Send terms[] once per term, start and end as ISO 8601 UTC datetimes, e.g. ?terms[]=sepsis&start=2024-01-01T00:00:00Z&end=2024-12-31T23:59:59Z'
    expect(await refused(await call([]))).toEqual({code: 400, message: 'terms[] is required', details: how})
    const long = `2025-${'x'.repeat(100)}`
    expect(await refused(await call(['pain'], long))).toEqual({code: 400, message: `start is not an ISO 8601 UTC datetime: "2025-${'x'.repeat(59)}"`, details: how})
  })

  it('calls a start or an end of spaces missing, not malformed', async () => {
    expect(await refused(await call(['pain'], '   ', YEAR[1]))).toMatchObject({message: 'start is required'})
    expect(await refused(await call(['pain'], YEAR[0], ' '))).toMatchObject({message: 'end is required'})
    expect(await refused(await call(['pain'], YEAR[0], 'soon'))).toMatchObject({message: 'end is not an ISO 8601 UTC datetime: "soon"'})
  })

  it('lets a data call span exactly 366 days, and names both ends when it spans more', async () => {
    expect((await call(['pain'], '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', 'data')).status).toBe(200)
    expect(await refused(await call(['pain'], '2024-01-01T00:00:00Z', '2025-01-01T00:00:01Z', 'data'))).toMatchObject({
      message: 'the window of a data call is longer than 366 days',
    })
  })
})
