import {describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {seedPosts} from '../../../src/interfaces/conversations/seed.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {onPostgres, openTestStore} from '../../helpers/store.js'
import {clientWithKey, JSON_TYPE, query} from './helpers.js'

// On PostgreSQL a search's time budget is the transaction's statement_timeout; a search past it
// is cancelled by the server and answered exactly as on SQLite, and its data call is given back.
describe.skipIf(!onPostgres)('interface E time budget on PostgreSQL', () => {
  it('a search past its budget is a 503 with the same body as on SQLite, and spends nothing', async () => {
    const store = await openTestStore()
    try {
      const clock = new ManualClock()
      await seedPosts(store.db, {count: 3000, comments: 3, from: '2024-01-01T00:00:00Z', to: '2025-12-31T23:59:59Z', seed: 5})
      const roomy = createApp({store, clock, log: () => undefined})
      const hurried = createApp({store, clock, log: () => undefined, conversations: {searchBudgetMs: 1}})
      const ctx = {store, db: store.db, clock, app: roomy, logs: []}
      const {key} = await clientWithKey(ctx, {data_calls: 1})
      const heavy = query(['the', 'a', 'pain', 'of the', 'with a', 'and the', 'in the', 'to the'], '2024-01-01T00:00:00Z', '2024-12-31T23:59:59Z')
      const ask = (app: typeof roomy, method: string) =>
        app.request(`/conversations/${method}?${heavy}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key}})

      const stopped = await ask(hurried, 'summary')
      expect(stopped.status).toBe(503)
      expect(stopped.headers.get('retry-after')).toBe('5')
      expect(await stopped.json()).toEqual({
        code: 503,
        message: 'service temporarily unavailable',
        details: 'A search may take at most 0.001 s, waiting for a free search thread included; this one was stopped. Narrow the window or the terms, or try again later.',
      })
      expect((await ask(hurried, 'data')).status).toBe(503)
      // The data call came back: the roomy app still has it to spend.
      const answered = await ask(roomy, 'data')
      expect(answered.status).toBe(200)
      expect(((await answered.json()) as {data_calls_remaining: number}).data_calls_remaining).toBe(0)
    } finally {
      await store.close()
    }
  })
})
