import {sql} from 'kysely'
import {afterEach, describe, expect, it} from 'vitest'
import {type CallContext, conversationCall} from '../../../src/interfaces/conversations/calls.js'
import {conversationLimits} from '../../../src/interfaces/conversations/limits.js'
import {RateLimiter} from '../../../src/interfaces/conversations/rate-limit.js'
import * as repo from '../../../src/interfaces/conversations/repository.js'
import type {SearchStream, Searcher} from '../../../src/interfaces/conversations/search-pool.js'
import type {SummaryRow} from '../../../src/interfaces/conversations/search-types.js'
import {createLogger} from '../../../src/lib/log.js'
import type {Db} from '../../../src/schema.js'
import {writesSettled} from '../../../src/store/transactions.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {clientWithKey} from './helpers.js'

/*
 * A call's store write that fails after the caller's answer is decided (recording an answered
 * summary, giving back a failed data call, recording an answer cut short) reaches no
 * caller: it must reach the log, as one line naming the call and the key, never the key itself.
 * Each test breaks the write by renaming its table while the (fake) search runs.
 */

const UTF8 = new TextEncoder()

/** A searcher whose searches run `summary` / `data` as given, with a free place for every call. */
function fakeSearcher(run: {summary?: () => Promise<SummaryRow[]>; data?: () => Promise<SearchStream>}): Searcher {
  return {
    threaded: false,
    admit: (key) => ({key, cancel: () => undefined}),
    summary: () => run.summary!(),
    data: () => run.data!(),
    close: async () => undefined,
  }
}

const hide = (db: Db, table: string) => sql`alter table ${sql.table(table)} rename to ${sql.table(`${table}_gone`)}`.execute(db)

/** A fresh store with a key, and calls on it whose searches run as `searches(db)` says. */
async function setup(searches: (db: Db) => Parameters<typeof fakeSearcher>[0]) {
  const ctx = await freshApp()
  const searcher = fakeSearcher(searches(ctx.db))
  const {key} = await clientWithKey(ctx, {data_calls: 3})
  const row = (await repo.findApiKey(ctx.db, key.id))!
  const logs: string[] = []
  const context: CallContext = {limits: conversationLimits(), summaryRate: new RateLimiter({burst: 10, perSecond: 10}), searcher, logger: createLogger((line) => logs.push(line))}
  const call = (method: 'summary' | 'data') =>
    conversationCall(ctx.db, {method, key: row, terms: ['metformin'], start: '2025-01-01T00:00:00Z', end: '2025-01-31T00:00:00Z', format: 'json'}, ctx.clock.now(), context)
  /** The one log line that says `what`: it names the key by id, never the key itself, on one line. */
  const lineSaying = (what: string) => {
    const lines = logs.filter((line) => line.includes(what))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`key ${key.id}`)
    expect(lines[0]).not.toContain(key.api_key)
    expect(lines[0]).not.toContain('\n')
    return lines[0]!
  }
  return {ctx, call, lineSaying}
}

describe('store writes that fail after the answer is decided are logged', () => {
  let ctx: TestContext | undefined
  afterEach(async () => {
    await ctx?.store.close()
    ctx = undefined
  })

  it('an answered summary whose record cannot be written', async () => {
    // The search answers after the record's table is gone.
    const s = await setup((db) => ({summary: () => hide(db, 'conversation_calls').then(() => [])}))
    ctx = s.ctx
    // The caller has its answer; the record, written after it, fails and is logged.
    const answer = await s.call('summary')
    expect(answer.kind).toBe('summary')
    await writesSettled(s.ctx.db)
    expect(s.lineSaying('could not record a summary call')).toContain(`call ${answer.result.id}`)
  })

  it('a failed data call that cannot be given back', async () => {
    const s = await setup((db) => ({data: () => hide(db, 'conversation_api_keys').then(() => Promise.reject(new Error('search broke')))}))
    ctx = s.ctx
    await expect(s.call('data')).rejects.toThrow('search broke')
    expect(s.lineSaying('could not give back the data call of a failed answer')).toMatch(/call [0-9a-f-]{36}/)
  })

  it('a data answer cut short whose record cannot be written', async () => {
    const pages = [UTF8.encode('{"id":1}'), UTF8.encode('{"id":2}')]
    const s = await setup(() => ({data: async () => ({summary: [], conversations: 2, next: async () => pages.shift(), cancel: async () => undefined})}))
    ctx = s.ctx
    const answer = await s.call('data')
    expect(answer.kind).toBe('data')
    if (answer.kind !== 'data') return
    const body = answer.body()
    expect(new TextDecoder().decode((await body.next()).value as Uint8Array)).toContain('data_calls_remaining')
    await hide(s.ctx.db, 'conversation_calls')
    // The reader goes away after the head: the answer ends, its record is attempted and fails.
    await body.return()
    expect(s.lineSaying('could not record a data answer cut short')).toContain(`call ${answer.result.id}`)
  })
})
