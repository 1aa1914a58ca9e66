import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {deletePosts} from '../../../src/interfaces/conversations/repository.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {author} from './fixtures.js'
import {clientWithKey, JSON_TYPE, query} from './helpers.js'

// A summary's counts over windows cut at and beside UTC midnights, counted by hand: which days are
// read from the per-day statistics, which documents of a ragged day are added or taken away, and
// the exact numbers (posts and comments apart, overlapping occurrences each counted, never a
// phrase across a post's title and content). summary-days.test.ts holds random windows to a brute
// force count; these are the cases a reader can check line by line.

function post(id: number, publishedAt: string, title: string, content: string, comments: {id: number; at: string; content: string}[] = []) {
  return {
    post: {
      id,
      author: author('doc-1'),
      published_at: publishedAt,
      rating: 1,
      iconsult: false,
      solved_at: null,
      title,
      content,
      comments: comments.map((c) => ({id: c.id, author: author('doc-2'), published_at: c.at, content: c.content, helpful_count: 0})),
    },
  }
}

/*
 * Four days of documents, each at an edge of its day:
 *   post 4  2025-02-28T23:59:59.999Z  "Pain" / "x"                    pain 1
 *     comment 41  2025-03-02T06:00:00Z  "pain"                         pain 1
 *   post 1  2025-03-01T00:00:00.000Z  "chest" / "pain pain pain"      pain 3, pain pain 2, chest pain 0 (across fields)
 *     comment 11  2025-03-01T12:00:00Z  "Chest pain, chest PAIN."     pain 2, chest pain 2
 *   post 2  2025-03-02T23:59:59.999Z  "chest pain" / "a"              pain 1, chest pain 1
 *   post 3  2025-03-03T00:00:00.000Z  "pain" / "chest pain"           pain 2, chest pain 1
 */
const DOCUMENTS = [
  post(4, '2025-02-28T23:59:59.999Z', 'Pain', 'x', [{id: 41, at: '2025-03-02T06:00:00Z', content: 'pain'}]),
  post(1, '2025-03-01T00:00:00.000Z', 'chest', 'pain pain pain', [{id: 11, at: '2025-03-01T12:00:00Z', content: 'Chest pain, chest PAIN.'}]),
  post(2, '2025-03-02T23:59:59.999Z', 'chest pain', 'a'),
  post(3, '2025-03-03T00:00:00.000Z', 'pain', 'chest pain'),
]

const TERMS = ['pain', 'chest pain', 'pain pain']

type Counts = [matches: number, posts: number, comments: number]

describe('a summary at the edges of its days', () => {
  let ctx: TestContext
  let apiKey: string
  beforeEach(async () => {
    ctx = await freshApp()
    apiKey = (await clientWithKey(ctx)).key.api_key
    await importPosts(ctx.db, DOCUMENTS)
  })
  afterEach(async () => ctx.store.close())

  async function summary(start: string, end: string, terms = TERMS) {
    const res = await ctx.app.request(`/conversations/summary?${query(terms, start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(res.status, `${start}..${end}: ${ctx.logs.slice(-3).join('\n')}`).toBe(200)
    return (await res.json()).summary as {terms: {term: string; matches: number; posts: number; comments: number}[]; uniques: {posts: number; comments: number}}
  }

  function expected(counts: Counts[], uniques: [posts: number, comments: number]) {
    return {terms: counts.map(([matches, posts, comments], i) => ({term: TERMS[i], matches, posts, comments})), uniques: {posts: uniques[0], comments: uniques[1]}}
  }

  it('counts two whole days from midnight to the last millisecond, both ends included', async () => {
    // Posts 1 and 2, comments 11 and 41.
    expect(await summary('2025-03-01T00:00:00Z', '2025-03-02T23:59:59.999Z')).toEqual(
      expected(
        [
          [3 + 1 + 2 + 1, 2, 2],
          [1 + 2, 1, 1],
          [2, 1, 0],
        ],
        [2, 2],
      ),
    )
  })

  it('leaves out the first and last millisecond when the window does', async () => {
    // Post 1 (first millisecond) and post 2 (last millisecond) out; comments 11 and 41 in.
    expect(await summary('2025-03-01T00:00:00.001Z', '2025-03-02T23:59:59.998Z')).toEqual(
      expected(
        [
          [2 + 1, 0, 2],
          [2, 0, 1],
          [0, 0, 0],
        ],
        [0, 2],
      ),
    )
  })

  it('takes in the millisecond before the first day and the first of the day after', async () => {
    // Every document: post 4 and post 3 join posts 1 and 2.
    expect(await summary('2025-02-28T23:59:59.999Z', '2025-03-03T00:00:00Z')).toEqual(
      expected(
        [
          [1 + 1 + 3 + 2 + 1 + 2, 4, 2],
          [2 + 1 + 1, 2, 1],
          [2, 1, 0],
        ],
        [4, 2],
      ),
    )
  })

  it('counts a ragged first and last day from their shorter side', async () => {
    // From 06:00 on the first day (post 1 out, comment 11 in) to 06:00 on the day after the
    // second (post 3 in): the first day less its morning, the second whole, the third's morning.
    expect(await summary('2025-03-01T06:00:00Z', '2025-03-03T06:00:00Z')).toEqual(
      expected(
        [
          [2 + 1 + 1 + 2, 2, 2],
          [2 + 1 + 1, 2, 1],
          [0, 0, 0],
        ],
        [2, 2],
      ),
    )
    // From 18:00 on the day before (post 4 in) to 18:00 on the second day (post 2 out).
    expect(await summary('2025-02-28T18:00:00Z', '2025-03-02T18:00:00Z')).toEqual(
      expected(
        [
          [1 + 3 + 2 + 1, 2, 2],
          [2, 0, 1],
          [2, 1, 0],
        ],
        [2, 2],
      ),
    )
  })

  it('counts one whole day, and the day less its last second', async () => {
    // 2025-03-02: comment 41 at 06:00 and post 2 at its last millisecond.
    expect(await summary('2025-03-02T00:00:00Z', '2025-03-02T23:59:59.999Z')).toEqual(
      expected(
        [
          [1 + 1, 1, 1],
          [1, 1, 0],
          [0, 0, 0],
        ],
        [1, 1],
      ),
    )
    expect(await summary('2025-03-02T00:00:00Z', '2025-03-02T23:59:59Z')).toEqual(
      expected(
        [
          [1, 0, 1],
          [0, 0, 0],
          [0, 0, 0],
        ],
        [0, 1],
      ),
    )
  })

  it('keeps its counts, and the statistics hold no empty rows, after documents are deleted', async () => {
    await deletePosts(ctx.db, [1])
    // Post 1 and its comment 11 are gone: post 2 and comment 41 are left in the two days.
    expect(await summary('2025-03-01T00:00:00Z', '2025-03-02T23:59:59.999Z')).toEqual(
      expected(
        [
          [1 + 1, 1, 1],
          [1, 1, 0],
          [0, 0, 0],
        ],
        [1, 1],
      ),
    )
    const emptyRows = await ctx.db.selectFrom('conversation_term_days').selectAll().where('docs', '<=', 0).execute()
    expect(emptyRows).toEqual([])
    // With every document gone, so is every row of the statistics.
    await deletePosts(ctx.db, [2, 3, 4])
    expect(await ctx.db.selectFrom('conversation_term_days').selectAll().execute()).toEqual([])
    expect(await summary('2025-02-28T00:00:00Z', '2025-03-04T00:00:00Z')).toEqual(
      expected(
        [
          [0, 0, 0],
          [0, 0, 0],
          [0, 0, 0],
        ],
        [0, 0],
      ),
    )
  })

  it('counts a document of many distinct words in and out of the statistics whole', async () => {
    // 300 distinct words: 300 one-word and 299 two-word terms, more rows than one statement writes.
    const words = Array.from({length: 300}, (_, i) => `w${String(i).padStart(3, '0')}`)
    await importPosts(ctx.db, [post(9, '2025-03-05T12:00:00Z', 'many', words.join(' '))])
    const rows = await ctx.db.selectFrom('conversation_term_days').select(['term', 'docs', 'matches']).where('term', 'like', 'w%').execute()
    expect(rows).toHaveLength(300 + 299)
    expect(rows.every((row) => row.docs === 1 && row.matches === 1)).toBe(true)
    const ends = ['w000', 'w299', 'w298 w299', 'many w000', 'w000 w001']
    const whole = await summary('2025-03-05T00:00:00Z', '2025-03-05T23:59:59.999Z', ends)
    expect(whole.terms.map((t) => [t.term, t.matches, t.posts])).toEqual([
      ['w000', 1, 1],
      ['w299', 1, 1],
      ['w298 w299', 1, 1],
      ['many w000', 0, 0],
      ['w000 w001', 1, 1],
    ])
    await deletePosts(ctx.db, [9])
    expect(await ctx.db.selectFrom('conversation_term_days').select('term').where('term', 'like', 'w%').execute()).toEqual([])
  })

  // An edge is read by time up to EDGE_SCAN_LIMIT documents (64), and through the search index
  // past that; both must count the same. A post on 2025-04-01 with `perHalf` comments in each half
  // of 2025-04-02: in the morning every tenth says "pain" and the first of those "pain pain"; in
  // the afternoon every seventh says "pain". The window ends at noon, so whichever side of the day
  // is read holds `perHalf` comments.
  for (const perHalf of [20, 70]) {
    it(`counts a ragged day's edge of ${perHalf} comments ${perHalf > 64 ? 'through the search index' : 'read by time'}`, async () => {
      const at = (hour: number, i: number) => `2025-04-02T${String(hour).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00Z`
      const morning = Array.from({length: perHalf}, (_, i) => ({id: 1000 + i, at: at(i < 60 ? 1 : 2, i), content: i % 10 === 0 ? (i === 0 ? 'pain pain' : 'pain') : 'cough'}))
      const afternoon = Array.from({length: perHalf}, (_, i) => ({id: 2000 + i, at: at(i < 60 ? 13 : 14, i), content: i % 7 === 0 ? 'pain' : 'fever'}))
      await importPosts(ctx.db, [post(50, '2025-04-01T10:00:00Z', 'question', 'x', [...morning, ...afternoon])])
      const painful = Math.ceil(perHalf / 10)
      expect(await summary('2025-04-01T00:00:00Z', '2025-04-02T11:59:59.999Z', ['pain', 'pain pain'])).toEqual({
        terms: [
          {term: 'pain', matches: painful + 1, posts: 0, comments: painful},
          {term: 'pain pain', matches: 1, posts: 0, comments: 1},
        ],
        uniques: {posts: 0, comments: painful},
      })
    })
  }
  it('answers windows in the years 0000 to 0099 and 9999 like any other: nothing found, no error, on either store', async () => {
    for (const [start, end] of [
      ['0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999Z'],
      ['0050-02-27T00:00:00Z', '0050-03-02T12:00:00Z'],
      ['0099-12-30T00:00:00Z', '0100-01-02T00:00:00Z'],
      ['9999-06-01T00:00:00Z', '9999-12-31T23:59:59.999Z'],
    ]) {
      const answer = await summary(start!, end!)
      expect(answer.uniques, `${start}..${end}`).toEqual({posts: 0, comments: 0})
      const data = await ctx.app.request(`/conversations/data?${query(TERMS, start!, end!)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
      expect(data.status, `data ${start}..${end}`).toBe(200)
    }
  })
})
