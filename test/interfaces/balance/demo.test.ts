import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {balanceDemoPart} from '../../../src/interfaces/balance/demo.js'
import {DEMO_CLIENT_ID, DEMO_CLIENT_SECRET} from '../../../src/demo.js'
import {addMember, registerClient} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {basicAuth} from '../../helpers/http-basic.js'

describe('balance demo data', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('seeds members with balances and history, idempotently, and its curl lines work', async () => {
    const now = ctx.clock.now()
    await registerClient(
      ctx.store,
      {
        name: 'Demo',
        url: 'https://partner.example.com',
        logo_url: 'https://partner.example.com/l.png',
        redirect_uris: ['http://127.0.0.1:8080/demo/callback'],
        grants: ['signon', 'balance'],
      },
      now,
      {id: DEMO_CLIENT_ID, secret: DEMO_CLIENT_SECRET},
    )
    const doctor = await addMember(
      ctx.db,
      {
        email: 'demo.doctor@medpanel.test',
        password: 'demo-password',
        first_name: 'Dana',
        last_name: 'Whitfield',
        country: 'US',
        specialty: 'Cardiology',
        npi: '1234567893',
        me: '03512345671',
      },
      now,
    )
    const ctxArgs = {baseUrl: 'http://127.0.0.1:8080', now, clientId: DEMO_CLIENT_ID, memberId: doctor.user_id}
    const first = await balanceDemoPart.seed(ctx.db, ctxArgs)
    const second = await balanceDemoPart.seed(ctx.db, ctxArgs)
    expect(second).toEqual(first)
    // Money stays a decimal (the --json writer prints it as an exact JSON number).
    const accounts = (first.info as {accounts: Array<{name: string; available_funds: {toString(): string}}>}).accounts
    expect(accounts.map((a) => [a.name, a.available_funds.toString()])).toEqual([
      ['Dana Whitfield', '178'],
      ['Priya Raman', '217.5'],
      ['Lukas Becker', '100'],
    ])

    const headers = {authorization: basicAuth(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET)}
    const summary = await ctx.app.request(`/balance/user_id/${doctor.user_id}/summary`, {headers})
    expect(await summary.json()).toEqual({available_funds: 178, currency: 'USD', preferred_status: true})
    for (const line of first.lines.filter((l) => !l.includes(' -d '))) {
      const path = /http:\/\/127\.0\.0\.1:8080(\S+)/.exec(line)![1]!
      expect((await ctx.app.request(path, {headers})).status, line).toBe(200)
    }
    const post = first.lines.find((l) => l.includes(' -d '))!
    const body = /-d '([^']+)'/.exec(post)![1]!
    const res = await ctx.app.request(`/balance/user_id/${doctor.user_id}/withdrawals`, {method: 'POST', headers: {...headers, 'content-type': 'application/json'}, body})
    expect(res.status).toBe(201)
  })
})
