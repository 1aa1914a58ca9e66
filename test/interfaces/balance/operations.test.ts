import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {addMember} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {basicAuth} from '../../helpers/http-basic.js'
import {missingOperations} from '../../helpers/openapi.js'

/** Interface C's operations: documented in /openapi.json, routed, and answering a real 200. */
describe("balances' operations", () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('are all in the OpenAPI document', async () => {
    // The table under "Calling it" in docs/balance.md.
    const documented = [
      'GET /balance/{key}/{id}/summary',
      'GET /balance/{key}/{id}/transactions',
      'GET /balance/transactions/{id}',
      'GET /balance/{key}/{id}/withdrawal_types',
      'POST /balance/{key}/{id}/withdrawals',
      'GET /balance/countries',
      'GET /balance/countries/{countryCode}/regions',
    ]
    expect(await missingOperations(ctx, documented), 'operations missing from /openapi.json').toEqual([])
  })

  it('are routed beside every other interface, from a router of their own', async () => {
    expect((await ctx.app.request('/balance/countries')).status).toBe(401)
    expect((await ctx.app.request('/balance/user_id/1/summary')).status).toBe(401)
    expect((await ctx.app.request('/user/oauth/token/info')).status).toBe(401)
  })

  it('answer 200 to HTTP Basic as a client holding the balance grant', async () => {
    const SECRET = 'a-long-enough-test-secret'
    const now = ctx.clock.now()
    await registerTestClient(ctx.store, {name: 'Payer', grants: ['balance']}, now, {id: 'payer', secret: SECRET})
    const member = await addMember(
      ctx.db,
      {email: 'smoke@clinic.example', password: 'correct horse battery', first_name: 'Sam', last_name: 'Oke', country: 'US', specialty: 'Oncology'},
      now,
    )
    const balance = await ctx.app.request(`/balance/user_id/${member.user_id}/summary`, {headers: {authorization: basicAuth('payer', SECRET)}})
    expect(balance.status).toBe(200)
    expect(await balance.json()).toEqual({available_funds: 0, currency: 'USD', preferred_status: false})
  })
})
