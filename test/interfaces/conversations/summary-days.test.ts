import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {deletePosts, summaryCounts, summaryShape} from '../../../src/interfaces/conversations/repository.js'
import {snapshotAlongside} from '../../../src/interfaces/conversations/search-pool.js'
import type {SearchQuery, SummaryRow} from '../../../src/interfaces/conversations/search-types.js'
import {readTransaction} from '../../../src/store/transactions.js'
import {tokenizeTexts} from '../../../src/store/fts-tokens.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {onPostgres} from '../../helpers/store.js'
import {conversationOf} from './helpers.js'

// Summaries over windows of several days whose first and last days are cut anywhere, on both
// stores: the per-day statistics plus the exact ragged edges must answer what counting every
// document of the window by brute force answers. (term-days.test.ts holds the statistics to a
// recount and, on SQLite, the summary to the FTS5 index alone.)

const VOCABULARY = ['pain', 'Pain', 'chest', 'chest-pain', 'a', 'b', 'a b a', 'x-ray', 'OR', 'Sjögren', 'naïve', '12']
const DAY = 86_400_000
const FIRST_DAY = Date.parse('2024-05-01T00:00:00Z')
const DAYS = 4

/** Occurrences of `phrase` in `field`, overlapping ones each counted: a loop nothing else shares. */
function occurrences(field: readonly string[], phrase: readonly string[]): number {
  let n = 0
  for (let i = 0; i + phrase.length <= field.length; i++) if (phrase.every((token, j) => field[i + j] === token)) n++
  return n
}

/** Every document of the window read back and counted in JavaScript, the uniques included. */
async function bruteForce(ctx: TestContext, query: SearchQuery): Promise<SummaryRow[]> {
  const from = Date.parse(query.start)
  const to = Date.parse(query.end)
  const inWindow = (at: string) => Date.parse(at) >= from && Date.parse(at) <= to
  const posts = (await ctx.db.selectFrom('conversation_posts').select(['published_at', 'title', 'content']).execute()).filter((p) => inWindow(p.published_at))
  const comments = (await ctx.db.selectFrom('conversation_comments').select(['published_at', 'content']).execute()).filter((c) => inWindow(c.published_at))
  const rows: SummaryRow[] = []
  for (const [kind, fields] of [
    ['post', await Promise.all(posts.map((p) => tokenizeTexts([p.title, p.content])))],
    ['comment', await Promise.all(comments.map((c) => tokenizeTexts([c.content])))],
  ] as const) {
    const holding = new Set<number>()
    for (const [t, phrase] of query.tokens.entries()) {
      let docs = 0
      let matches = 0
      for (const [d, document] of fields.entries()) {
        const n = document.reduce((sum, field) => sum + occurrences(field, phrase), 0)
        if (n > 0) {
          docs++
          matches += n
          holding.add(d)
        }
      }
      rows.push({t, kind, docs, matches})
    }
    rows.push({t: -1, kind, docs: holding.size, matches: 0})
  }
  return rows
}

/** Rows as a map, rows of nothing left out (a store may leave out a term's row that counts nothing). */
function counts(rows: readonly SummaryRow[]) {
  return Object.fromEntries(
    rows
      .map((r) => [`${r.t}:${r.kind}`, {docs: Number(r.docs), matches: Number(r.matches)}] as const)
      .filter(([, c]) => c.docs !== 0 || c.matches !== 0)
      .sort(([a], [b]) => a.localeCompare(b)),
  )
}

/**
 * Asks the summary of `terms` over the window and holds it to brute force; true when whole days
 * were counted from the statistics (a window with at least one and a term short enough for them).
 */
async function summaryAgrees(ctx: TestContext, terms: readonly string[], start: string, end: string): Promise<boolean> {
  const tokens = await tokenizeTexts(terms)
  const searchable = terms.flatMap((term, i) => (tokens[i]!.length > 0 ? [{term, tokens: tokens[i]!}] : []))
  if (searchable.length === 0) return false
  const query = {terms: searchable.map((s) => s.term), tokens: searchable.map((s) => s.tokens), start, end}
  const expected = counts(await bruteForce(ctx, query))
  expect(counts(await summaryCounts(ctx.db, query))).toEqual(expected)
  // PostgreSQL: the same with the comments counted on a second connection, as a summary call may.
  if (onPostgres) expect(counts(await readTransaction(ctx.db, (trx) => summaryCounts(trx, query, snapshotAlongside(ctx.db, 10_000))))).toEqual(expected)
  return summaryShape(query).days !== undefined
}

describe('a summary over several days with ragged ends', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('equals a brute-force count of the window, after imports, replacements and deletions', async () => {
    const text = fc.array(fc.constantFrom(...VOCABULARY), {maxLength: 10}).map((w) => w.join(' '))
    // Documents over four days, many of them near a midnight, to the millisecond.
    const stamp = fc
      .oneof(
        fc.integer({min: FIRST_DAY - 3_000, max: FIRST_DAY + DAYS * DAY + 3_000}),
        fc.tuple(fc.integer({min: 0, max: DAYS}), fc.integer({min: -1_500, max: 1_500})).map(([d, ms]) => FIRST_DAY + d * DAY + ms),
      )
      .map((ms) => new Date(ms).toISOString())
    const post = fc.record({
      id: fc.integer({min: 1_000, max: 1_015}),
      title: text,
      content: text,
      published: stamp,
      comments: fc.array(fc.record({content: text, published: stamp}), {maxLength: 3}),
    })
    const step = fc.oneof(
      fc.record({import: fc.uniqueArray(post, {minLength: 1, maxLength: 5, selector: (p) => p.id})}),
      fc.record({remove: fc.uniqueArray(fc.integer({min: 1_000, max: 1_015}), {maxLength: 3})}),
    )
    const term = fc.array(fc.constantFrom(...VOCABULARY), {minLength: 1, maxLength: 3}).map((w) => w.join(' '))
    // Windows of two to four days, cut at a midnight, a millisecond either side of one, or anywhere.
    const cut = fc.oneof(fc.constantFrom(0, 1, -1, DAY - 1, DAY / 2), fc.integer({min: 0, max: DAY - 1}))
    const window = fc.tuple(fc.integer({min: 0, max: 1}), cut, fc.integer({min: 1, max: 3}), cut).map(([day, startCut, length, endCut]): [string, string] => {
      const start = FIRST_DAY + day * DAY + startCut
      const end = Math.max(start, FIRST_DAY + (day + length) * DAY + endCut)
      return [new Date(start).toISOString(), new Date(end).toISOString()]
    })

    let whole = 0
    await fc.assert(
      fc.asyncProperty(fc.array(step, {minLength: 1, maxLength: 4}), fc.uniqueArray(term, {minLength: 1, maxLength: 3}), window, async (steps, terms, [start, end]) => {
        for (const s of steps) {
          if ('remove' in s) await deletePosts(ctx.db, s.remove)
          else
            await importPosts(
              ctx.db,
              s.import.map((p) => conversationOf(p, p.id, (j) => p.id * 10 + j)),
            )
        }
        if (await summaryAgrees(ctx, terms, start, end)) whole++
      }),
      {numRuns: 60},
    )
    // The property is about the statistics: most windows must have had whole days counted from them.
    expect(whole).toBeGreaterThan(20)
  })

  it('equals a brute-force count over windows of one to twelve years', async () => {
    const YEAR_DAYS = 365
    const SPAN = 12 * YEAR_DAYS
    const text = fc.array(fc.constantFrom(...VOCABULARY), {maxLength: 8}).map((w) => w.join(' '))
    // Documents anywhere in twelve years, some a moment either side of a midnight.
    const stamp = fc
      .tuple(fc.integer({min: -2, max: SPAN + 2}), fc.oneof(fc.integer({min: -1_500, max: 1_500}), fc.integer({min: 0, max: DAY - 1})))
      .map(([d, ms]) => new Date(FIRST_DAY + d * DAY + ms).toISOString())
    const post = fc.record({
      id: fc.integer({min: 2_000, max: 2_040}),
      title: text,
      content: text,
      published: stamp,
      comments: fc.array(fc.record({content: text, published: stamp}), {maxLength: 2}),
    })
    const term = fc.array(fc.constantFrom(...VOCABULARY), {minLength: 1, maxLength: 2}).map((w) => w.join(' '))
    const cut = fc.oneof(fc.constantFrom(0, 1, -1, DAY - 1), fc.integer({min: 0, max: DAY - 1}))
    // From just over a year (past the old limit of 366 days) to the whole span and beyond.
    let whole = 0
    const window = fc
      .tuple(fc.integer({min: -3, max: 2 * YEAR_DAYS}), cut, fc.integer({min: YEAR_DAYS + 1, max: SPAN + 5}), cut)
      .map(([day, startCut, length, endCut]): [string, string] => [
        new Date(FIRST_DAY + day * DAY + startCut).toISOString(),
        new Date(FIRST_DAY + (day + length) * DAY + endCut).toISOString(),
      ])
    await importPosts(
      ctx.db,
      fc.sample(fc.uniqueArray(post, {minLength: 30, maxLength: 41, selector: (p) => p.id}), {numRuns: 1, seed: 31})[0]!.map((p) => conversationOf(p, p.id, (j) => p.id * 10 + j)),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(post, {maxLength: 4, selector: (p) => p.id}),
        fc.uniqueArray(term, {minLength: 1, maxLength: 3}),
        window,
        async (more, terms, [start, end]) => {
          if (more.length > 0)
            await importPosts(
              ctx.db,
              more.map((p) => conversationOf(p, p.id, (j) => p.id * 10 + j)),
            )
          if (await summaryAgrees(ctx, terms, start, end)) whole++
        },
      ),
      {numRuns: 40},
    )
    // Phrases too long for the statistics are counted from the index instead: most must not be.
    expect(whole).toBeGreaterThan(20)
  })
})
