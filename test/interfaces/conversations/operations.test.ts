import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {missingOperations} from '../../helpers/openapi.js'
import {clientWithKey, query} from './helpers.js'

/** Interface E's operations: documented in /openapi.json, and answering a real 200. */
describe("conversation search's operations", () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('are all in the OpenAPI document', async () => {
    // The table under "Calling it" in docs/conversations.md.
    const documented = ['GET /conversations/summary', 'GET /conversations/data']
    expect(await missingOperations(ctx, documented), 'operations missing from /openapi.json').toEqual([])
  })

  it('answer 200 to the API key of a client holding the conversations grant', async () => {
    const {key} = await clientWithKey(ctx)
    const search = await ctx.app.request(`/conversations/summary?${query(['sepsis'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {
      headers: {'X-Service-Conversation-API-Key': key.api_key},
    })
    expect(search.status).toBe(200)
    expect(await search.json()).toMatchObject({summary: {terms: [{term: 'sepsis', matches: 0}], uniques: {posts: 0, comments: 0}}})
  })
})
