import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {phrase} from '../../../src/interfaces/conversations/repository.js'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {author} from './fixtures.js'
import {clientWithKey, JSON_TYPE, occurrences, query, words} from './helpers.js'

/*
 * The summary finds documents with FTS5 MATCH over each term as a quoted phrase and counts
 * occurrences from the index's position lists. These tests pin what that split introduces:
 * MATCH text made from user input must stay literal, both halves must agree on every term,
 * overlapping phrase occurrences must each count, and a phrase never spans two fields.
 */

const WINDOW = {start: '2025-01-01T00:00:00.000Z', end: '2025-12-31T23:59:59.000Z'}

interface PostText {
  title: string
  content: string
  comments: string[]
}

/** Brute-force counts over ASCII text: the reference the service must equal. */
function reference(posts: PostText[], terms: string[]) {
  const anyPost = new Set<number>()
  const anyComment = new Set<string>()
  const rows = terms.map((term) => {
    const row = {term, matches: 0, posts: 0, comments: 0}
    posts.forEach((post, i) => {
      const n = occurrences(post.title, term) + occurrences(post.content, term)
      if (n > 0) {
        row.matches += n
        row.posts += 1
        anyPost.add(i)
      }
      post.comments.forEach((comment, j) => {
        const m = occurrences(comment, term)
        if (m > 0) {
          row.matches += m
          row.comments += 1
          anyComment.add(`${i}/${j}`)
        }
      })
    })
    return row
  })
  return {terms: rows, uniques: {posts: anyPost.size, comments: anyComment.size}}
}

function conversationsOf(posts: PostText[], base: number) {
  return posts.map((p, i) => ({
    post: {
      id: base + i,
      author: author('doc-1'),
      published_at: '2025-06-01T00:00:00Z',
      rating: 1,
      iconsult: false,
      solved_at: null,
      title: p.title,
      content: p.content,
      comments: p.comments.map((content, j) => ({id: (base + i) * 10 + j, author: author('doc-2'), published_at: '2025-06-02T00:00:00Z', content, helpful_count: 0})),
    },
  }))
}

describe('phrase()', () => {
  it('quotes a term as one FTS5 string, doubling its quotes', () => {
    expect(phrase('chest pain')).toBe('"chest pain"')
    expect(phrase('say "stop" now')).toBe('"say ""stop"" now"')
    expect(phrase('"')).toBe('""""')
    expect(phrase('content: metformin OR NEAR(a b)')).toBe('"content: metformin OR NEAR(a b)"')
  })
})

describe('search by MATCH and position lists', () => {
  let ctx: TestContext
  let apiKey: string
  beforeEach(async () => {
    ctx = await freshApp()
    apiKey = (await clientWithKey(ctx, {data_calls: 100})).key.api_key
  })
  afterEach(async () => ctx.store.close())

  const summary = async (terms: string[]) => {
    const res = await ctx.app.request(`/conversations/summary?${query(terms, WINDOW.start, WINDOW.end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(res.status).toBe(200)
    return (await res.json()).summary
  }
  const load = async (posts: PostText[], base = 1) => {
    await ctx.db.deleteFrom('conversation_comments').execute()
    await ctx.db.deleteFrom('conversation_posts').execute()
    await ctx.db.deleteFrom('conversation_term_days').execute()
    await importPosts(ctx.db, conversationsOf(posts, base))
  }

  it('counts overlapping occurrences of a phrase each, and never joins a title to its content', async () => {
    await load([
      // "very very": title 2 (0-1, 1-2), content 1; the title's last and the content's first "very" are not a phrase
      {title: 'very very very', content: 'very very', comments: ['Very, very, VERY, very.', 'very']},
      // "a b a": 2 in "a b a b a" (positions 0 and 2); "b a" 2
      {title: 'nothing here', content: 'a b a b a', comments: []},
    ])
    expect(await summary(['very very', 'very', 'a b a', 'b a', 'very very very very'])).toEqual({
      terms: [
        {term: 'very very', matches: 6, posts: 1, comments: 1},
        {term: 'very', matches: 10, posts: 1, comments: 2},
        {term: 'a b a', matches: 2, posts: 1, comments: 0},
        {term: 'b a', matches: 2, posts: 1, comments: 0},
        {term: 'very very very very', matches: 1, posts: 0, comments: 1},
      ],
      uniques: {posts: 2, comments: 2},
    })
  })

  it('keeps FTS5 column filters, operators and grouping in a term literal', async () => {
    await load([
      // the words "content" and "title" next to the drug: only here do the literal phrases match
      {title: 'Title metformin dose', content: 'content: metformin and more', comments: []},
      // metformin in the content column, never after the word "content"
      {title: 'Metformin', content: 'metformin NEAR chest pain + nausea', comments: ['{title} : metformin', 'chest AND pain']},
    ])
    const terms = [
      'content: metformin',
      'title:metformin',
      '{title}: metformin',
      '- metformin',
      '^metformin',
      'NEAR(chest pain)',
      'chest + pain',
      'chest AND pain',
      'near chest',
      'metformin*',
      '"metformin"',
    ]
    const got = await summary(terms)
    expect(got).toEqual(
      reference(
        [
          {title: 'Title metformin dose', content: 'content: metformin and more', comments: []},
          {title: 'Metformin', content: 'metformin NEAR chest pain + nausea', comments: ['{title} : metformin', 'chest AND pain']},
        ],
        terms,
      ),
    )
    // spot checks worked out by hand, so the reference itself is not the only witness
    expect(got.terms[0]).toEqual({term: 'content: metformin', matches: 1, posts: 1, comments: 0})
    expect(got.terms[2]).toEqual({term: '{title}: metformin', matches: 2, posts: 1, comments: 1})
    expect(got.terms[6]).toEqual({term: 'chest + pain', matches: 1, posts: 1, comments: 0})
    expect(got.terms[7]).toEqual({term: 'chest AND pain', matches: 1, posts: 0, comments: 1})
  })

  it('folds case beyond ASCII and keeps accents distinct, in documents and occurrences alike', async () => {
    await load([{title: 'CAFÉ Café café', content: 'cafe ÆRØ ærø', comments: ['Straße STRASSE']}])
    expect(await summary(['café', 'cafe', 'ærø', 'straße'])).toEqual({
      terms: [
        {term: 'café', matches: 3, posts: 1, comments: 0},
        {term: 'cafe', matches: 1, posts: 1, comments: 0},
        {term: 'ærø', matches: 2, posts: 1, comments: 0},
        {term: 'straße', matches: 1, posts: 0, comments: 1},
      ],
      uniques: {posts: 1, comments: 1},
    })
  })

  it('splits the window inside one second the same way for documents, occurrences and the data call', async () => {
    const doc = (id: number, published: string, comment: string) => ({
      post: {
        id,
        author: author('doc-1'),
        published_at: published,
        rating: 1,
        iconsult: false,
        solved_at: null,
        title: 'sepsis sepsis',
        content: 'early sepsis',
        comments: [{id: id * 10, author: author('doc-2'), published_at: '2025-06-01T00:00:00Z', content: comment, helpful_count: 0}],
      },
    })
    // post 1 at .300, post 2 at .700 of the same second; both comments at .000 of that second
    await importPosts(ctx.db, [doc(1, '2025-06-01T00:00:00.300Z', 'sepsis'), doc(2, '2025-06-01T00:00:00.700Z', 'no match here')])
    const at = async (start: string, end: string) => {
      const res = await ctx.app.request(`/conversations/data?${query(['sepsis'], start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
      expect(res.status).toBe(200)
      const body = await res.json()
      return {term: body.summary.terms[0], uniques: body.summary.uniques, posts: body.conversations.map((c: {post: {id: number}}) => c.post.id)}
    }
    expect(await at('2025-06-01T00:00:00.500Z', '2025-06-01T00:00:00.999Z')).toEqual({
      term: {term: 'sepsis', matches: 3, posts: 1, comments: 0},
      uniques: {posts: 1, comments: 0},
      posts: [2],
    })
    expect(await at('2025-06-01T00:00:00.000Z', '2025-06-01T00:00:00.500Z')).toEqual({
      term: {term: 'sepsis', matches: 4, posts: 1, comments: 1},
      uniques: {posts: 1, comments: 1},
      posts: [1],
    })
    expect(await at('2025-06-01T00:00:00.001Z', '2025-06-01T00:00:00.299Z')).toEqual({
      term: {term: 'sepsis', matches: 0, posts: 0, comments: 0},
      uniques: {posts: 0, comments: 0},
      posts: [],
    })
    expect(await at('2025-05-31T23:59:59.999Z', '2025-06-01T00:00:01Z')).toEqual({
      term: {term: 'sepsis', matches: 7, posts: 2, comments: 1},
      uniques: {posts: 2, comments: 1},
      posts: [1, 2],
    })
  })

  /**
   * Posts (with comments) published at `instant`s, written with `text`s, and windows whose ends are
   * random instants or a document's own time (so ends landing exactly on a document are tried):
   * every summary of `terms` must equal brute force over the documents in the window.
   */
  async function summariesEqualBruteForce(instant: fc.Arbitrary<string>, text: fc.Arbitrary<string>, terms: string[], maxDocs: number) {
    const docs = fc.array(fc.record({at: instant, text, comments: fc.array(fc.record({at: instant, text}), {maxLength: 2})}), {minLength: 1, maxLength: maxDocs})
    const scenario = docs.chain((list) => {
      const end = fc.oneof(instant, fc.constantFrom(...list.flatMap((d) => [d.at, ...d.comments.map((c) => c.at)])))
      return fc.tuple(fc.constant(list), fc.array(fc.tuple(end, end), {minLength: 3, maxLength: 3}))
    })
    await fc.assert(
      fc.asyncProperty(scenario, async ([list, cuts]) => {
        await ctx.db.deleteFrom('conversation_comments').execute()
        await ctx.db.deleteFrom('conversation_posts').execute()
        await ctx.db.deleteFrom('conversation_term_days').execute()
        await importPosts(
          ctx.db,
          list.map((d, i) => ({
            post: {
              id: i + 1,
              author: author('doc-1'),
              published_at: d.at,
              rating: 1,
              iconsult: false,
              solved_at: null,
              title: 'note',
              content: d.text,
              comments: d.comments.map((c, j) => ({id: (i + 1) * 10 + j, author: author('doc-2'), published_at: c.at, content: c.text, helpful_count: 0})),
            },
          })),
        )
        for (const [a, b] of cuts) {
          const [start, end] = a <= b ? [a, b] : [b, a]
          const posts = list.filter((d) => d.at >= start && d.at <= end)
          const comments = list.flatMap((d) => d.comments).filter((c) => c.at >= start && c.at <= end)
          const expected = reference(
            [...posts.map((p) => ({title: 'note', content: p.text, comments: []})), {title: '', content: '', comments: comments.map((c) => c.text)}],
            terms,
          )
          const res = await ctx.app.request(`/conversations/summary?${query(terms, start, end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
          expect(res.status).toBe(200)
          expect((await res.json()).summary).toEqual(expected)
          // A second between calls: the key's summary allowance (100 at once, then 1 a second) never runs dry, however long fast-check shrinks.
          ctx.clock.advance(1)
        }
      }),
      {numRuns: 25},
    )
  }

  it("counts documents at the window's edge seconds exactly, whatever the window (property)", async () => {
    // Documents scattered to the millisecond over a few seconds around midnight; windows cut
    // anywhere in them. The index counts whole seconds by key range and checks exact times only in
    // the first and last second, and a window this short is counted by the index alone.
    const midnight = Date.parse('2025-06-02T00:00:00.000Z')
    const instant = fc.integer({min: -3000, max: 3000}).map((ms) => new Date(midnight + ms).toISOString())
    const text = fc.constantFrom('sepsis', 'early sepsis shock', 'shock', 'early sepsis shock and sepsis')
    await summariesEqualBruteForce(instant, text, ['sepsis', 'early sepsis shock'], 12)
  })

  it('counts windows of whole days with ragged ends exactly, each end added or taken away (property)', async () => {
    // Documents and window ends near four midnights, some a few ms away, some hours: each ragged
    // day is counted from its shorter side, by adding its part inside the window or taking its
    // part outside away from the day's statistics.
    const midnight = Date.parse('2025-06-02T00:00:00.000Z')
    const HOUR = 3_600_000
    const instant = fc
      .tuple(fc.integer({min: 0, max: 3}), fc.oneof(fc.integer({min: -3000, max: 3000}), fc.integer({min: -6 * HOUR, max: 6 * HOUR})))
      .map(([day, offset]) => new Date(midnight + day * 86_400_000 + offset).toISOString())
    const text = fc.constantFrom('sepsis', 'early sepsis shock', 'septic shock', 'shock and sepsis sepsis')
    await summariesEqualBruteForce(instant, text, ['sepsis', 'septic shock', 'early sepsis shock'], 14)
  })

  it('runs the largest query allowed (20 terms of 12 words) and refuses anything larger', async () => {
    const posts = [
      {
        title: 'w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13',
        content: 'w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14',
        comments: ['w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20'],
      },
    ]
    await load(posts)
    const terms = Array.from({length: 20}, (_, i) => Array.from({length: 12}, (_, j) => `w${i + j + 1}`).join(' '))
    const expected = reference(posts, terms)
    // by hand: terms 0-1 in the title, 1-2 in the content, 4-8 in the comment
    expect(expected.terms.flatMap((t, i) => (t.matches > 0 ? [i] : []))).toEqual([0, 1, 2, 4, 5, 6, 7, 8])
    expect(await summary(terms)).toEqual(expected)
    const data = await ctx.app.request(`/conversations/data?${query(terms, WINDOW.start, WINDOW.end)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey}})
    expect(data.status).toBe(200)
    expect((await data.json()).conversations.map((c: {matched_terms: string[]}) => c.matched_terms)).toEqual([expected.terms.filter((t) => t.matches > 0).map((t) => t.term)])

    const refuse = async (search: string[], message: string) => {
      const res = await ctx.app.request(`/conversations/summary?${query(search, WINDOW.start, WINDOW.end)}`, {
        headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': apiKey},
      })
      expect(res.status).toBe(400)
      expect((await res.json()).message).toBe(message)
    }
    await refuse([...terms, 'one more'], 'at most 20 distinct terms may be sent in one call')
    await refuse([`${terms[0]} w13`], 'terms[0] has more than 12 words')
    await refuse(['x'.repeat(201)], 'terms[0] is longer than 200 characters')
  })

  it('agrees with brute force on text full of FTS5 syntax', async () => {
    const vocabulary = ['pain', 'chest', 'content:', 'title', ':', '^x', 'x+y', 'NEAR', 'NEAR(', ')', '{title}', '"', '""', 'AND', 'OR', 'NOT', '*', 'x', 'y', '-x', "it's", 'x.y']
    const text = fc.array(fc.constantFrom(...vocabulary), {maxLength: 12}).map((w) => w.join(' '))
    const term = fc.array(fc.constantFrom(...vocabulary), {minLength: 1, maxLength: 4}).map((w) => w.join(' '))
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({title: text, content: text, comments: fc.array(text, {maxLength: 3})}), {minLength: 1, maxLength: 4}),
        fc.uniqueArray(term, {minLength: 1, maxLength: 4}),
        async (posts, terms) => {
          run += 1
          const searchable = [...new Set(terms.map((t) => t.trim()))].filter((t) => words(t).length > 0)
          if (searchable.length === 0) return
          await load(posts, run * 10)
          expect(await summary(searchable)).toEqual(reference(posts, searchable))
        },
      ),
      {numRuns: 60, seed: 20261123},
    )
  })
})
