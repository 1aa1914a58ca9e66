import {COMMENT_COLUMNS, POST_COLUMNS} from '../../../src/interfaces/conversations/repository.js'
import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {clientWithKey, conversationOf, JSON_TYPE, occurrences, query, words} from './helpers.js'

interface Doc {
  kind: 'post' | 'comment'
  id: number
  postId: number
  published: string
  fields: string[]
}

function reference(docs: Doc[], terms: string[], start: string, end: string) {
  const inWindow = docs.filter((d) => d.published >= start && d.published <= end)
  const hitPosts = new Set<number>()
  const hitComments = new Set<number>()
  const matched = new Map<number, Set<string>>()
  const summary = terms.map((term) => {
    const row = {term, matches: 0, posts: 0, comments: 0}
    for (const doc of inWindow) {
      const n = doc.fields.reduce((sum, field) => sum + occurrences(field, term), 0)
      if (n === 0) continue
      row.matches += n
      row[doc.kind === 'post' ? 'posts' : 'comments'] += 1
      ;(doc.kind === 'post' ? hitPosts : hitComments).add(doc.id)
      matched.set(doc.postId, (matched.get(doc.postId) ?? new Set()).add(term))
    }
    return row
  })
  return {summary: {terms: summary, uniques: {posts: hitPosts.size, comments: hitComments.size}}, matched}
}

describe('counts agree with a brute-force reference', () => {
  let ctx: TestContext
  let apiKey: string
  beforeEach(async () => {
    ctx = await freshApp()
    apiKey = (await clientWithKey(ctx, {data_calls: 1000})).key.api_key
  })
  afterEach(async () => ctx.store.close())

  /** Replaces every post and comment in the store with `conversations`; the documents, for the reference. */
  const replaceCorpus = async (conversations: ReturnType<typeof conversationOf>[]): Promise<Doc[]> => {
    await ctx.db.deleteFrom('conversation_comments').execute()
    await ctx.db.deleteFrom('conversation_posts').execute()
    await ctx.db.deleteFrom('conversation_term_days').execute()
    await importPosts(ctx.db, conversations)
    return conversations.flatMap(({post}) => [
      {kind: 'post' as const, id: post.id, postId: post.id, published: post.published_at, fields: [post.title, post.content]},
      ...post.comments.map((c) => ({kind: 'comment' as const, id: c.id, postId: post.id, published: c.published_at, fields: [c.content]})),
    ])
  }

  const call = async (method: string, terms: string[], start: string, end: string) => {
    const res = await ctx.app.request(`/conversations/${method}?${query(terms, start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(res.status).toBe(200)
    return res.json()
  }

  it('on seeded community text, for words, phrases and punctuated terms', async () => {
    await seedPosts(ctx.db, {count: 400, comments: 3, from: '2024-01-01T00:00:00Z', to: '2025-12-31T23:59:59Z', seed: 11})
    const posts = await ctx.db.selectFrom('conversation_posts').select(POST_COLUMNS).execute()
    const comments = await ctx.db.selectFrom('conversation_comments').select(COMMENT_COLUMNS).execute()
    // the seeded community looks like one: iConsult requests, some solved, and only those
    expect(posts.filter((p) => p.iconsult === 1).every((p) => p.title.startsWith('iConsult: '))).toBe(true)
    expect(posts.filter((p) => p.iconsult === 0).every((p) => p.solved_at === null && !p.title.startsWith('iConsult'))).toBe(true)
    expect(posts.some((p) => p.solved_at !== null && p.solved_at >= p.published_at)).toBe(true)
    expect(comments.every((c) => c.published_at >= posts.find((p) => p.id === c.post_id)!.published_at.slice(0, 19))).toBe(true)
    const docs: Doc[] = [
      ...posts.map((p) => ({kind: 'post' as const, id: p.id, postId: p.id, published: p.published_at, fields: [p.title, p.content]})),
      ...comments.map((c) => ({kind: 'comment' as const, id: c.id, postId: c.post_id, published: c.published_at, fields: [c.content]})),
    ]
    const terms = [
      'metformin',
      'Atrial Fibrillation',
      'chest pain',
      'TSH',
      'the',
      'sacubitril/valsartan',
      'heart failure with reduced ejection fraction',
      'CHA2DS2-VASc score',
      'a',
      'pain',
    ]
    const start = '2024-06-01T00:00:00.000Z'
    const end = '2025-05-31T23:59:59.000Z'
    const expected = reference(docs, terms, start, end)
    expect(expected.summary.terms.every((t) => t.matches > 0)).toBe(true)
    const summary = await call('summary', terms, start, end)
    expect(summary.summary).toEqual(expected.summary)
    const data = await call('data', terms, start, end)
    expect(data.summary).toEqual(expected.summary)
    const got = new Map<number, string[]>(data.conversations.map((c: {post: {id: number}; matched_terms: string[]}) => [c.post.id, c.matched_terms]))
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([...expected.matched.keys()].sort((a, b) => a - b))
    for (const [postId, set] of expected.matched) expect(got.get(postId)).toEqual(terms.filter((t) => set.has(t)))
    const published = data.conversations.map((c: {post: {published_at: string}}) => c.post.published_at)
    expect(published).toEqual([...published].sort())
    for (const c of data.conversations) {
      // A post's comments come oldest first (then by id), whatever order the store lists rows in.
      const own = comments.filter((m) => m.post_id === c.post.id).sort((x, y) => x.published_at.localeCompare(y.published_at) || x.id - y.id)
      expect(c.post.comments.map((m: {id: number}) => m.id)).toEqual(own.map((m) => m.id))
    }
  })

  it('on random text, including repeated and overlapping phrases', async () => {
    const vocabulary = ['pain', 'Pain', 'PAIN', 'chest', 'painful', 'a', 'b', 'x-ray', 'a.b', 'OR', 'NOT', '"q"', '(p)', 'star*']
    const text = fc.array(fc.constantFrom(...vocabulary), {maxLength: 14}).map((w) => w.join(' '))
    const stamp = fc.constantFrom('2025-01-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z')
    const term = fc.array(fc.constantFrom(...vocabulary), {minLength: 1, maxLength: 3}).map((w) => w.join(' '))
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({title: text, content: text, published: stamp, comments: fc.array(fc.record({content: text, published: stamp}), {maxLength: 3})}), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.uniqueArray(term, {minLength: 1, maxLength: 3}),
        async (posts, terms) => {
          run += 1
          const base = run * 100
          const docs = await replaceCorpus(posts.map((p, i) => conversationOf(p, base + i, (j) => base * 10 + i * 5 + j)))
          const start = '2025-01-01T00:00:00.000Z'
          const end = '2025-12-31T23:59:59.000Z'
          const searchable = terms.filter((t) => words(t).length > 0)
          if (searchable.length === 0) return
          const body = await call('summary', searchable, start, end)
          expect(body.summary).toEqual(reference(docs, searchable, start, end).summary)
        },
      ),
      {numRuns: 60, seed: 20261122},
    )
  })

  it('over words, and pairs of adjacent words, longer than an index lexeme may be', async () => {
    // PostgreSQL indexes each word and each pair of adjacent words as a lexeme of at most 2,047
    // bytes. Longer ones are left out (no term is that long); stored, their length would wrap
    // and a word of 2,052 x's would pass for "xxxx".
    const [long, longer, wrapping] = ['x'.repeat(1100), 'y'.repeat(1100), 'x'.repeat(2052)]
    const texts = [`a ${long} ${longer} b`, `${longer} ${long} xxxx`, `${wrapping} b`, `a ${wrapping}`]
    const conversations = texts.map((content, i) =>
      conversationOf(
        {title: 'pair', content, published: `2025-03-0${i + 1}T10:00:00.000Z`, comments: [{content, published: '2025-03-05T10:00:00.000Z'}]},
        900 + i,
        (j) => 9000 + i * 5 + j,
      ),
    )
    const docs = await replaceCorpus(conversations)
    const terms = ['xxxx', 'a b', 'pair a', 'b']
    const [start, end] = ['2025-01-01T00:00:00.000Z', '2025-12-31T23:59:59.999Z']
    const expected = reference(docs, terms, start, end)
    // "pair a" spans the title and the content: two fields, no phrase
    expect(expected.summary.terms.map((t) => t.matches)).toEqual([2, 0, 0, 4])
    expect((await call('summary', terms, start, end)).summary).toEqual(expected.summary)
    expect((await call('data', terms, start, end)).summary).toEqual(expected.summary)
  })

  // Windows of every shape over documents published at any millisecond: whole years, months and
  // days (which PostgreSQL takes from date lexemes in its index) with ragged ends of any length.
  it('on random windows over documents published at any time, ends at midnights, month and year starts or anywhere', async () => {
    const vocabulary = ['pain', 'chest', 'chest pain', 'a', 'b', 'x-ray']
    const text = fc.array(fc.constantFrom(...vocabulary), {maxLength: 8}).map((w) => w.join(' '))
    const FROM = Date.parse('2023-11-01T00:00:00.000Z')
    const TO = Date.parse('2026-02-28T23:59:59.999Z')
    const anyTime = fc.integer({min: FROM, max: TO})
    // A bound: a random millisecond, the same time of day on the last day of its month, the
    // midnight, month or year start at or before it, or the millisecond before one of those.
    const bound = fc.tuple(anyTime, fc.constantFrom('any', 'last day', 'day', 'month', 'year'), fc.boolean()).map(([ms, snap, before]) => {
      const d = new Date(ms)
      if (snap === 'any') return ms
      if (snap === 'last day') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0) + (ms % 86_400_000)
      const snapped = Date.UTC(d.getUTCFullYear(), snap === 'year' ? 0 : d.getUTCMonth(), snap === 'day' ? d.getUTCDate() : 1)
      return before ? snapped - 1 : snapped
    })
    const DAY = 86_400_000
    // Documents near the window's ends (a millisecond, a day, a month either side) as well as anywhere.
    const near = (ms: number) =>
      fc.oneof(
        anyTime,
        fc.constantFrom(-1, 0, 1, -DAY, DAY, -DAY - 1, DAY + 1, -31 * DAY, 31 * DAY, 366 * DAY).map((offset) => ms + offset),
      )
    const stamp = (a: number, b: number) => fc.oneof(near(a), near(b)).map((ms) => new Date(ms).toISOString())
    const term = fc.array(fc.constantFrom('pain', 'chest', 'a', 'b', 'x', 'ray'), {minLength: 1, maxLength: 3}).map((w) => w.join(' '))
    const corpus = fc.tuple(bound, bound).chain(([a, b]) =>
      fc.tuple(
        fc.constant(a),
        fc.constant(b),
        fc.array(fc.record({title: text, content: text, published: stamp(a, b), comments: fc.array(fc.record({content: text, published: stamp(a, b)}), {maxLength: 4})}), {
          minLength: 1,
          maxLength: 8,
        }),
      ),
    )
    let run = 0
    await fc.assert(
      fc.asyncProperty(corpus, fc.uniqueArray(term, {minLength: 1, maxLength: 3}), async ([a, b, posts], terms) => {
        run += 1
        const base = run * 100
        const docs = await replaceCorpus(posts.map((p, i) => conversationOf(p, base + i, (j) => base * 10 + i * 5 + j)))
        const start = new Date(Math.min(a, b)).toISOString()
        const end = new Date(Math.max(a, b)).toISOString()
        const expected = reference(docs, terms, start, end)
        expect((await call('summary', terms, start, end)).summary).toEqual(expected.summary)
        if (Date.parse(end) - Date.parse(start) > 365 * 86_400_000) return
        const data = await call('data', terms, start, end)
        expect(data.summary).toEqual(expected.summary)
        expect(data.conversations.map((c: {post: {id: number}}) => c.post.id).sort((x: number, y: number) => x - y)).toEqual([...expected.matched.keys()].sort((x, y) => x - y))
      }),
      {numRuns: 80, seed: 20261130},
    )
  })
})
