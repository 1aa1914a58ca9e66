import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {postCredit} from '../../../src/interfaces/balance/service.js'
import {getMemberRow} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {AUTH, PAYPAL_DETAILS, seedClients, seedMember} from './setup.js'

describe('control characters never reach stored text or the log', () => {
  let ctx: TestContext
  let memberId: number
  beforeEach(async () => {
    ctx = await freshApp()
    await seedClients(ctx.store, ctx.clock.now())
    memberId = (await seedMember(ctx.db, ctx.clock.now())).user_id
    await postCredit(ctx.db, await getMemberRow(ctx.db, memberId), {type: 'HONORARIUM', amount: '500'}, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const withdraw = (details: Record<string, string>) =>
    ctx.app.request(`/balance/user_id/${memberId}/withdrawals`, {
      method: 'POST',
      headers: {...AUTH, 'content-type': 'application/json'},
      body: JSON.stringify({type: 'PAYPAL', amount: 20, member_details: details}),
    })

  it('refuses escape sequences and line breaks in member details with a 422 naming each field, storing nothing', async () => {
    const res = await withdraw({...PAYPAL_DETAILS, first_name: 'Ada\u001b[2J\u0007', last_name: 'Love\r\nlace'})
    expect(res.status).toBe(422)
    const {message} = (await res.json()) as {message: string}
    expect(message).toMatch(/first_name: must not contain control characters/)
    expect(message).toMatch(/last_name: must not contain control characters/)
    const list = (await (await ctx.app.request(`/balance/user_id/${memberId}/transactions`, {headers: AUTH})).json()) as {type: string}[]
    expect(list.filter((t) => t.type === 'WITHDRAWAL')).toHaveLength(0)
    expect((await withdraw(PAYPAL_DETAILS)).status).toBe(201)
  })

  it('refuses a lone surrogate in member details with a 422, storing nothing', async () => {
    // Written as JSON escapes: JSON.stringify would keep them as they are.
    const body = `{"type":"PAYPAL","amount":20,"member_details":{"first_name":"Ada\\ud800","last_name":"\\udc00Lovelace","email":"${PAYPAL_DETAILS.email}"}}`
    const res = await ctx.app.request(`/balance/user_id/${memberId}/withdrawals`, {method: 'POST', headers: {...AUTH, 'content-type': 'application/json'}, body})
    expect(res.status).toBe(422)
    const {message} = (await res.json()) as {message: string}
    expect(message).toMatch(/first_name: must be well-formed Unicode text/)
    expect(message).toMatch(/last_name: must be well-formed Unicode text/)
    const list = (await (await ctx.app.request(`/balance/user_id/${memberId}/transactions`, {headers: AUTH})).json()) as {type: string}[]
    expect(list.filter((t) => t.type === 'WITHDRAWAL')).toHaveLength(0)
    // A pair that makes one character is text like any other.
    expect((await withdraw({...PAYPAL_DETAILS, first_name: 'Ada \ud83d\ude00'})).status).toBe(201)
  })

  it('logs the path as sent, so %0a cannot start a forged access-log line', async () => {
    await ctx.app.request('/balance/countries%0a2026-01-01T00:00:00.000Z%20GET%20/admin%20200%200.1ms', {headers: AUTH})
    const line = ctx.logs.find((l) => l.includes('/balance/countries'))!
    expect(line).toContain('/balance/countries%0a2026')
    expect(line).not.toMatch(/[\r\n]/)
  })
})
