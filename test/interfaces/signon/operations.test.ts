import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {missingOperations} from '../../helpers/openapi.js'

/** Interface A's operations: documented in /openapi.json, and answering a real 200. */
describe("sign-on's operations", () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('are all in the OpenAPI document', async () => {
    // The table under "Calling it" in docs/signon.md.
    const documented = [
      'GET /oauth/authorize',
      'POST /oauth/session',
      'POST /oauth/authorize',
      'POST /oauth/token',
      'GET /user/oauth/token/info',
      'GET /oauth/token/info',
      'GET /user/oauth/user/info',
      'GET /oauth/user/info',
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/revoke',
      'POST /oauth/introspect',
      'GET /oauth/authorized_applications',
      'POST /oauth/authorized_applications/revoke',
      'POST /oauth/sign_out',
    ]
    expect(await missingOperations(ctx, documented), 'operations missing from /openapi.json').toEqual([])
  })

  it('answer discovery, and a client_credentials token to a client holding the pulses grant', async () => {
    const SECRET = 'a-long-enough-test-secret'
    expect((await ctx.app.request('/.well-known/oauth-authorization-server')).status).toBe(200)
    await registerTestClient(ctx.store, {name: 'Pulse reader', grants: ['pulses']}, ctx.clock.now(), {id: 'pulse-reader', secret: SECRET})
    const token = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: 'pulse-reader', client_secret: SECRET}))
    expect(token.status).toBe(200)
    expect(await token.json()).toMatchObject({access_token: expect.any(String), token_type: 'bearer'})
  })
})
