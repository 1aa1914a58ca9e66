import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {fewDocumentsSummary, summaryCounts} from '../../../src/interfaces/conversations/repository.js'
import type {SearchQuery, SummaryRow} from '../../../src/interfaces/conversations/search-types.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {summarize} from '../../../src/interfaces/conversations/views.js'
import type {Store} from '../../../src/store/db.js'
import {narrow} from '../../../src/store/database.js'
import {tokenizeTexts} from '../../../src/store/fts-tokens.js'
import {onPostgres, openTestStore} from '../../helpers/store.js'
import {CORPUS} from './fixtures.js'
import {conversationOf} from './helpers.js'

/*
 * A summary whose window holds few documents is counted from the documents themselves, on the
 * caller's thread, instead of by the search index on a search thread (calls.ts, fewDocuments).
 * Both must give the same answer for any window and any terms.
 */

const TERMS = ['chest pain', 'Pain', 'metformin', 'a', 'the patient', 'atrial fibrillation', 'blood pressure was', 'zzqxjv', 'STOP', 'or']

const search = async (terms: string[], start: string, end: string): Promise<SearchQuery> => ({terms, tokens: await tokenizeTexts(terms), start, end})
const answer = (terms: string[], rows: SummaryRow[]) => summarize(terms, rows)

describe.skipIf(onPostgres)('a summary of few documents', () => {
  let store: Store
  beforeEach(async () => {
    store = await openTestStore()
    await importPosts(store.db, CORPUS)
    // Two days of seeded posts, a few an hour: windows of minutes to hours hold a handful.
    await seedPosts(narrow(store.db), {count: 300, comments: 3, from: '2023-05-01T00:00:00Z', to: '2023-05-02T23:59:59Z', seed: 9})
  })
  afterEach(async () => store.close())

  it('counts as the search index does, in every window it counts', async () => {
    const windows: [string, string][] = [
      ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'],
      ['2025-03-01T10:00:00.250Z', '2025-03-01T10:00:00.250Z'],
      ['2025-03-01T10:00:00.251Z', '2025-06-16T09:30:00Z'],
      ['2025-12-31T23:59:59Z', '2026-01-01T00:00:00Z'],
      ['2000-01-01T00:00:00Z', '2000-01-01T00:00:00Z'],
    ]
    // Random stretches of the seeded days, from a second to a few hours.
    let state = 7
    const random = () => {
      state = (state * 1103515245 + 12345) % 2 ** 31
      return state / 2 ** 31
    }
    const from = Date.parse('2023-04-30T22:00:00Z')
    for (let i = 0; i < 40; i++) {
      const start = from + Math.floor(random() * 52 * 3_600_000)
      windows.push([new Date(start).toISOString(), new Date(start + Math.floor(random() * 4 * 3_600_000)).toISOString()])
    }
    let counted = 0
    let found = 0
    for (const [start, end] of windows) {
      for (let n = 1; n <= 3; n++) {
        const terms = Array.from({length: n}, (_, j) => TERMS[(counted + 3 * j + n) % TERMS.length]!).filter((term, j, all) => all.indexOf(term) === j)
        const q = await search(terms, start, end)
        const few = await fewDocumentsSummary(store.db, q, 1_000)
        expect(few, `${start} .. ${end}`).toBeDefined()
        const index = await summaryCounts(store.db, q)
        expect(answer(terms, few!), `${terms.join(', ')} over ${start} .. ${end}`).toEqual(answer(terms, index))
        counted++
        found += answer(terms, few!).uniques.posts + answer(terms, few!).uniques.comments
      }
    }
    // The windows did hold matches: the comparison could fail.
    expect(found).toBeGreaterThan(50)
  })

  it('folds case beyond ASCII and keeps accents distinct, as the index does', async () => {
    const text = 'Die Ärztin sagte: ÄRZTIN, Arztin, ärztin-Ärztin. ΣΊΣΥΦΟΣ und σίσυφος; Straße STRASSE'
    await importPosts(store.db, [
      conversationOf(
        {published: '2023-06-01T12:00:00Z', title: 'Ärztin Σίσυφος', content: text, comments: [{published: '2023-06-01T12:30:00Z', content: text}]},
        900,
        (j) => 9000 + j,
      ),
    ])
    const terms = ['ärztin', 'ARZTIN', 'σίσυφος', 'straße', 'strasse', 'ärztin ärztin']
    const q = await search(terms, '2023-06-01T00:00:00Z', '2023-06-01T23:59:59Z')
    const few = await fewDocumentsSummary(store.db, q)
    expect(few).toBeDefined()
    expect(answer(terms, few!)).toEqual(answer(terms, await summaryCounts(store.db, q)))
    expect(answer(terms, few!).terms[0]!.matches).toBeGreaterThan(0)
  })

  it('leaves a window of more documents than its limit to the index, and counts an empty one without any', async () => {
    const year = await search(['chest pain'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')
    // The year holds 3 posts and 4 comments.
    expect(await fewDocumentsSummary(store.db, year, 3)).toBeUndefined()
    expect(answer(['chest pain'], (await fewDocumentsSummary(store.db, year, 4))!)).toEqual(answer(['chest pain'], await summaryCounts(store.db, year)))
    const empty = await search(['chest pain'], '2000-01-01T00:00:00Z', '2000-01-01T00:00:00Z')
    expect(answer(['chest pain'], (await fewDocumentsSummary(store.db, empty, 0))!)).toEqual({
      terms: [{term: 'chest pain', matches: 0, posts: 0, comments: 0}],
      uniques: {posts: 0, comments: 0},
    })
  })
})

describe.skipIf(!onPostgres)('a summary of few documents on PostgreSQL', () => {
  it('is left to the store (its searches need no thread)', async () => {
    const store = await openTestStore()
    try {
      expect(await fewDocumentsSummary(store.db, await search(['pain'], '2000-01-01T00:00:00Z', '2000-01-01T00:00:00Z'))).toBeUndefined()
    } finally {
      await store.close()
    }
  })
})
