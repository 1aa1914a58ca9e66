import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {missingOperations} from '../../helpers/openapi.js'

/** Interface D's operations: documented in /openapi.json, and answering a real 200. */
describe("pulse export's operations", () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('are all in the OpenAPI document', async () => {
    // The table under "Calling it" in docs/pulses.md.
    const documented = ['GET /projects/{projectId}/export', 'GET /clients/projectsInfo', 'GET /clients/info']
    expect(await missingOperations(ctx, documented), 'operations missing from /openapi.json').toEqual([])
  })

  it('answer 200 to the bearer token of a client holding the pulses grant', async () => {
    const SECRET = 'a-long-enough-test-secret'
    await registerTestClient(ctx.store, {name: 'Pulse reader', grants: ['pulses']}, ctx.clock.now(), {id: 'pulse-reader', secret: SECRET})
    const token = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: 'pulse-reader', client_secret: SECRET}))
    expect(token.status).toBe(200)
    const {access_token: accessToken} = (await token.json()) as {access_token: string}
    const info = await ctx.app.request('/clients/info', {headers: {authorization: `Bearer ${accessToken}`}})
    expect(info.status).toBe(200)
    expect(await info.json()).toEqual({ClientInfo: {Admin: false}, ProjectInfo: []})
  })
})
