import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {narrow} from '../../../src/store/database.js'
import {createApp} from '../../../src/app.js'
import {importPosts} from '../../../src/interfaces/conversations/import.js'
import {summaryCounts} from '../../../src/interfaces/conversations/repository.js'
import {snapshotAlongside} from '../../../src/interfaces/conversations/search-pool.js'
import type {Alongside} from '../../../src/interfaces/conversations/search-postgres.js'
import type {SearchQuery} from '../../../src/interfaces/conversations/search-types.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {readTransaction} from '../../../src/store/transactions.js'
import {tokenizeTexts} from '../../../src/store/fts-tokens.js'
import type {Store} from '../../../src/store/db.js'
import {openStore} from '../../../src/schema.js'
import {onPostgres, openTestStore, reopenableStore} from '../../helpers/store.js'
import {clientWithKey, conversationOf, JSON_TYPE, query} from './helpers.js'

// On PostgreSQL a summary call may count its comments on a second connection while its first
// counts the posts (search-postgres.ts, summaryCountsPostgres). The second connection reads the
// first one's exported snapshot, so the answer is one moment's, as when one statement counts all.
describe.skipIf(!onPostgres)('a PostgreSQL summary on two connections', () => {
  let store: Store
  beforeEach(async () => {
    store = await openTestStore()
  })
  afterEach(async () => store.close())

  const START = '2024-03-01T00:00:00Z'
  const END = '2024-03-31T23:59:59Z'
  /** A post with `comments` comments, each saying `text`, on 10 March 2024. */
  const conversation = (id: number, text: string, comments: number) =>
    conversationOf(
      {
        published: '2024-03-10T12:00:00.000Z',
        title: `post ${id}`,
        content: text,
        comments: Array.from({length: comments}, () => ({published: '2024-03-10T13:00:00.000Z', content: text})),
      },
      id,
      (j) => id * 10 + j,
    )
  const search = async (terms: string[]): Promise<SearchQuery> => ({terms, tokens: await tokenizeTexts(terms), start: START, end: END})
  /** The comments' rows as [t, documents], by t (-1: the uniques). */
  const comments = (rows: {t: number; kind: string; docs: number}[]) =>
    rows
      .filter((r) => r.kind === 'comment')
      .map((r) => [r.t, r.docs])
      .sort((a, b) => a[0]! - b[0]!)

  it('a comment committed after the first connection took its snapshot is counted by neither', async () => {
    await importPosts(store.db, [conversation(1, 'metformin and chest pain', 3), conversation(2, 'chest pain', 2)])
    const q = await search(['metformin', 'chest pain'])
    const before = await summaryCounts(store.db, q)
    let seconds = 0
    // Between the export and the second connection's import, another post with two more
    // matching comments commits; the second connection must not see it.
    const late: Alongside = async (snapshot, run) => {
      seconds++
      await importPosts(store.db, [conversation(3, 'metformin', 2)])
      return snapshotAlongside(store.db, 10_000)(snapshot, run)
    }
    const split = await readTransaction(store.db, (trx) => summaryCounts(trx, q, late))
    expect(seconds).toBe(1)
    expect(split).toEqual(before)
    // The late post does count once the snapshot is newer: the comparison above could fail.
    const after = await summaryCounts(store.db, q)
    expect(comments(after)).not.toEqual(comments(before))
    expect(comments(after)).toEqual([
      [-1, 7],
      [0, 5],
      [1, 5],
    ])
  })

  it('a failure on the second connection fails the call and gives both connections back', async () => {
    await importPosts(store.db, [conversation(1, 'metformin', 1)])
    const q = await search(['metformin'])
    const broken: Alongside = (snapshot, run) =>
      snapshotAlongside(store.db, 10_000)(snapshot, async (conn) => {
        await run(conn)
        throw new Error('the second connection failed')
      })
    await expect(readTransaction(store.db, (trx) => summaryCounts(trx, q, broken))).rejects.toThrow('the second connection failed')
    // Neither connection was left in a transaction: a write through the pool still commits.
    await importPosts(store.db, [conversation(2, 'metformin', 1)])
    expect(comments(await summaryCounts(store.db, q))).toEqual([
      [-1, 2],
      [0, 2],
    ])
  })

  it('summaries at once on a pool of two connections all answer: none waits for a second connection it did not see free', async () => {
    // Each summary holds one connection for its transaction; were it to wait for a second that
    // another summary holds, the two would wait on each other until their time budget ran out.
    const {options, drop} = await reopenableStore()
    const small = await openStore({...options, poolSize: 2})
    try {
      await importPosts(narrow(small.db), [conversation(1, 'metformin and chest pain', 3), conversation(2, 'chest pain', 2)])
      const clock = new ManualClock()
      const app = createApp({store: small, clock, log: () => undefined})
      const {key} = await clientWithKey({store: small, db: small.db, clock, app, logs: []}, {data_calls: 1})
      const ask = () =>
        app.request(`/conversations/summary?${query(['metformin', 'chest pain'], START, END)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key}})
      const answers = await Promise.all(Array.from({length: 8}, ask))
      expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200))
      for (const res of answers) expect(((await res.json()) as {summary: unknown}).summary).toMatchObject({uniques: {posts: 2, comments: 5}})
    } finally {
      await small.close()
      drop()
    }
  })

  it('a summary call answers what one statement counts', async () => {
    await importPosts(store.db, [conversation(1, 'metformin and chest pain', 3), conversation(2, 'chest pain', 2), conversation(3, 'atrial fibrillation', 1)])
    const clock = new ManualClock()
    const app = createApp({store, clock, log: () => undefined})
    const {key} = await clientWithKey({store, db: store.db, clock, app, logs: []}, {data_calls: 1})
    const terms = ['metformin', 'chest pain', 'atrial fibrillation']
    const res = await app.request(`/conversations/summary?${query(terms, START, END)}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key}})
    expect(res.status).toBe(200)
    const body = (await res.json()) as {summary: unknown}
    const one = await summaryCounts(store.db, await search(terms))
    const posts = (t: number) => one.find((r) => r.t === t && r.kind === 'post')?.docs ?? 0
    const comments = (t: number) => one.find((r) => r.t === t && r.kind === 'comment')?.docs ?? 0
    expect(body.summary).toMatchObject({uniques: {posts: posts(-1), comments: comments(-1)}})
    expect([posts(-1), comments(-1)]).toEqual([3, 6])
  })
})
