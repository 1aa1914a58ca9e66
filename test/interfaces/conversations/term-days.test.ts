import fc from 'fast-check'
import {CompiledQuery} from 'kysely'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {deletePosts, summaryCounts, summarySql} from '../../../src/interfaces/conversations/repository.js'
import {splitWindow} from '../../../src/interfaces/conversations/window.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import type {SummaryRow} from '../../../src/interfaces/conversations/search-types.js'
import {isPostgres} from '../../../src/store/dialect.js'
import {asciiTokens, sqliteTokens, tokenizeTexts} from '../../../src/store/fts-tokens.js'
import {countEveryDocument} from '../../../src/interfaces/conversations/term-days.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {conversationOf} from './helpers.js'

// The per-day term statistics behind interface E's summaries (docs/conversations.md, "How a
// summary is counted"): always equal to a recount of every document, and summaries from them
// equal to summaries from the search index alone.

const VOCABULARY = ['pain', 'Pain', 'chest', 'chest-pain', 'a', 'b', 'x-ray', 'a.b', 'OR', '"q"', 'Sjögren', 'SJÖGREN', 'naïve', 'ÉCG', 'İstanbul', 'straße', '12', '3.5mg']

async function statistics(ctx: TestContext) {
  return ctx.db.selectFrom('conversation_term_days').selectAll().where('docs', '>', 0).orderBy('term').orderBy('kind').orderBy('day').execute()
}

async function recount(ctx: TestContext) {
  await ctx.db.deleteFrom('conversation_term_days').execute()
  await countEveryDocument(ctx.db)
  return statistics(ctx)
}

function sorted(rows: readonly SummaryRow[]) {
  return rows.map((r) => ({t: Number(r.t), kind: r.kind, docs: Number(r.docs), matches: Number(r.matches)})).sort((a, b) => a.t - b.t || a.kind.localeCompare(b.kind))
}

describe('per-day term statistics', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('split ASCII text exactly as FTS5 does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({unit: fc.integer({min: 1, max: 127}).map((c) => String.fromCharCode(c)), maxLength: 60}), {minLength: 1, maxLength: 20}),
        async (texts) => {
          expect(texts.map(asciiTokens)).toEqual(await sqliteTokens(texts))
        },
      ),
      {numRuns: 60},
    )
    // Text beyond ASCII goes to FTS5 itself.
    expect(await tokenizeTexts(['Sjögren ÉCG naïve', 'plain text'])).toEqual([...(await sqliteTokens(['Sjögren ÉCG naïve'])), ['plain', 'text']])
  })

  it('cut a window at UTC midnights, to the millisecond, taking each ragged day from its shorter side', () => {
    expect(splitWindow('2024-01-01T00:00:00.000Z', '2024-12-31T23:59:59.999Z')).toEqual({days: {first: 19723, last: 20088}, edges: []})
    // A millisecond and a second outside the window: whole days from the statistics, minus those.
    expect(splitWindow('2024-01-01T00:00:00.001Z', '2024-01-03T23:59:59.000Z')).toEqual({
      days: {first: 19723, last: 19725},
      edges: [
        {start: '2024-01-01T00:00:00.000Z', end: '2024-01-01T00:00:00.000Z', sign: -1},
        {start: '2024-01-03T23:59:59.001Z', end: '2024-01-03T23:59:59.999Z', sign: -1},
      ],
    })
    // Four and three hours inside the window: those parts are counted and added.
    expect(splitWindow('2024-01-01T20:00:00.000Z', '2024-01-03T03:00:00.000Z')).toEqual({
      days: {first: 19724, last: 19724},
      edges: [
        {start: '2024-01-01T20:00:00.000Z', end: '2024-01-01T23:59:59.999Z', sign: 1},
        {start: '2024-01-03T00:00:00.000Z', end: '2024-01-03T03:00:00.000Z', sign: 1},
      ],
    })
    // No whole day: the first day less its six hours outside, plus the five hours of the second.
    expect(splitWindow('2024-01-01T06:00:00.000Z', '2024-01-02T05:00:00.000Z')).toEqual({
      days: {first: 19723, last: 19723},
      edges: [
        {start: '2024-01-01T00:00:00.000Z', end: '2024-01-01T05:59:59.999Z', sign: -1},
        {start: '2024-01-02T00:00:00.000Z', end: '2024-01-02T05:00:00.000Z', sign: 1},
      ],
    })
    // One day to 23:59:59Z: the day, less its last second.
    expect(splitWindow('2024-06-01T00:00:00.000Z', '2024-06-01T23:59:59.000Z')).toEqual({
      days: {first: 19875, last: 19875},
      edges: [{start: '2024-06-01T23:59:59.001Z', end: '2024-06-01T23:59:59.999Z', sign: -1}],
    })
    // Short windows are counted as they are: inside one day, or across a midnight.
    expect(splitWindow('2024-06-01T10:00:00.000Z', '2024-06-01T14:00:00.000Z')).toEqual({edges: [{start: '2024-06-01T10:00:00.000Z', end: '2024-06-01T14:00:00.000Z', sign: 1}]})
    expect(splitWindow('2024-06-01T22:00:00.000Z', '2024-06-02T02:00:00.000Z')).toEqual({edges: [{start: '2024-06-01T22:00:00.000Z', end: '2024-06-02T02:00:00.000Z', sign: 1}]})
  })

  it('equal a full recount after seeding, and after random imports, replacements and deletions', async () => {
    // A few seeded posts stay in the store throughout: each run below recounts every document.
    await seedPosts(ctx.db, {count: 30, comments: 3, from: '2024-03-01T00:00:00Z', to: '2024-03-09T00:00:00Z', seed: 5})
    expect(await statistics(ctx)).toEqual(await recount(ctx))

    const text = fc.array(fc.constantFrom(...VOCABULARY), {maxLength: 12}).map((w) => w.join(' '))
    // Three days and their edges, to the millisecond.
    const stamp = fc.integer({min: Date.parse('2024-05-01T00:00:00Z') - 5_000, max: Date.parse('2024-05-04T00:00:00Z') + 5_000}).map((ms) => new Date(ms).toISOString())
    const post = fc.record({
      id: fc.integer({min: 1_000, max: 1_012}),
      title: text,
      content: text,
      published: stamp,
      comments: fc.array(fc.record({content: text, published: stamp}), {maxLength: 3}),
    })
    const step = fc.oneof(
      fc.record({import: fc.uniqueArray(post, {minLength: 1, maxLength: 4, selector: (p) => p.id})}),
      fc.record({remove: fc.uniqueArray(fc.integer({min: 1_000, max: 1_012}), {maxLength: 4})}),
    )
    const term = fc.array(fc.constantFrom(...VOCABULARY), {minLength: 1, maxLength: 3}).map((w) => w.join(' '))
    const window = fc.tuple(stamp, stamp).map(([a, b]): [string, string] => (a <= b ? [a, b] : [b, a]))

    await fc.assert(
      fc.asyncProperty(fc.array(step, {minLength: 1, maxLength: 6}), fc.uniqueArray(term, {minLength: 1, maxLength: 3}), window, async (steps, terms, [start, end]) => {
        for (const s of steps) {
          if ('remove' in s) await deletePosts(ctx.db, s.remove)
          else {
            // A comment id belongs to its post slot, so a replacement may move none to another post.
            const conversations = s.import.map((p) => conversationOf(p, p.id, (j) => p.id * 10 + j))
            await importPosts(ctx.db, conversations)
          }
        }
        const kept = await statistics(ctx)
        expect(kept).toEqual(await recount(ctx))

        // A summary over the statistics answers what the index alone answers, ragged ends included
        // (summarySql is FTS5's; summary-days.test.ts holds both stores to a brute-force count).
        if (isPostgres(ctx.db)) return
        const tokens = await tokenizeTexts(terms)
        const searchable = terms.filter((_, i) => tokens[i]!.length > 0)
        if (searchable.length === 0) return
        const query = {terms: searchable, tokens: searchable.map((t) => tokens[terms.indexOf(t)]!), start, end}
        const reference = summarySql(query)
        const expected = (await ctx.db.executeQuery<SummaryRow>(CompiledQuery.raw(reference.text, reference.parameters))).rows
        expect(sorted(await summaryCounts(ctx.db, query))).toEqual(sorted(expected))
      }),
      {numRuns: 40},
    )
    // Forty rounds of writes and recounts: PostgreSQL on a busy machine needs more than the default.
  })
})
