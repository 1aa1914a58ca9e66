import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {defaultLimits, type ConversationLimits} from '../../../src/interfaces/conversations/limits.js'
import {searcherFor} from '../../../src/interfaces/conversations/search-pool.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {openStore, type Store} from '../../../src/store/db.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {tempDir} from '../../helpers/cli.js'
import {clientWithKey, JSON_TYPE, query, XML_TYPE} from './helpers.js'

const SEED = {count: 300, comments: 3, from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:59:59Z', seed: 5}
const WINDOW = ['2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z'] as const

/** An app on a store file: its searches run on search threads. */
async function fileApp(limits: Partial<ConversationLimits> = {}): Promise<TestContext> {
  const store = await openStore({file: join(tempDir('medpanel-threads-'), 'store.db')})
  const clock = new ManualClock()
  const logs: string[] = []
  const app = createApp({db: store.db, clock, log: (line) => logs.push(line), conversations: limits})
  return {store, db: store.db, clock, app, logs}
}

describe('searches on threads', () => {
  const open: Store[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()))
  })

  it('answer byte for byte as the in-process search does', async () => {
    const threaded = await fileApp()
    const inProcess = await freshApp()
    open.push(threaded.store, inProcess.store)
    for (const ctx of [threaded, inProcess]) await seedPosts(ctx.db, SEED)
    const keys = [(await clientWithKey(threaded, {data_calls: 10})).key.api_key, (await clientWithKey(inProcess, {data_calls: 10})).key.api_key]
    const call = async (ctx: TestContext, key: string, path: string, accept: string) => {
      const res = await ctx.app.request(path, {headers: {Accept: accept, 'X-Service-Conversation-API-Key': key}})
      expect(res.status).toBe(200)
      return (await res.text()).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, 'ID')
    }
    for (const accept of [JSON_TYPE, XML_TYPE]) {
      for (const method of ['summary', 'data']) {
        const path = `/conversations/${method}?${query(['metformin', 'chest pain', 'the'], ...WINDOW)}`
        const a = await call(threaded, keys[0]!, path, accept)
        const b = await call(inProcess, keys[1]!, path, accept)
        if (method === 'data') expect(a.length).toBeGreaterThan(10_000)
        expect(a).toBe(b)
      }
    }
    expect(searcherFor(threaded.db, defaultLimits()).threaded).toBe(true)
    expect(searcherFor(inProcess.db, defaultLimits()).threaded).toBe(false)
  })
})
