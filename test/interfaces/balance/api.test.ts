import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {findMemberBy} from '../../../src/registry/repository.js'
import {registerClient, updateClient, updateMember} from '../../../src/registry/service.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {AUTH, CHECK_DETAILS, CLIENT, PAYPAL_DETAILS, seedClients, seedMember} from './setup.js'
import {basicAuth} from '../../helpers/http-basic.js'

describe('interface C over HTTP', () => {
  let ctx: TestContext
  let member: Awaited<ReturnType<typeof seedMember>>

  beforeEach(async () => {
    ctx = await freshApp()
    await seedClients(ctx.store, ctx.clock.now())
    member = await seedMember(ctx.db, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const row = async () => (await findMemberBy(ctx.db, 'id', member.user_id))!
  const credit = async (amount: string, type = 'HONORARIUM', survey_id?: string) => balance.postCredit(ctx.db, await row(), {type, amount, survey_id}, ctx.clock.now())
  const get = (path: string, headers: Record<string, string> = AUTH) => ctx.app.request(path, {headers})
  const withdraw = (body: unknown, headers: Record<string, string> = {}, key = `user_id/${member.user_id}`) =>
    ctx.app.request(`/balance/${key}/withdrawals`, {
      method: 'POST',
      headers: {...AUTH, 'content-type': 'application/json', ...headers},
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })

  describe('authentication', () => {
    it('answers 401 with a message and a Basic challenge without valid credentials of a balance client', async () => {
      for (const headers of [
        {} as Record<string, string>,
        {authorization: basicAuth(CLIENT.id, 'wrong')},
        {authorization: basicAuth('signon-client', 'signon-client-secret')},
        {authorization: 'Bearer abc'},
      ]) {
        const res = await get(`/balance/user_id/${member.user_id}/summary`, headers)
        expect(res.status).toBe(401)
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic /)
        const body = (await res.json()) as {message: string}
        expect(Object.keys(body)).toEqual(['message'])
      }
      const noGrant = await get(`/balance/countries`, {authorization: basicAuth('signon-client', 'signon-client-secret')})
      expect(((await noGrant.json()) as {message: string}).message).toMatch(/no permission/)
    })

    it('shuts out an expired client at once', async () => {
      expect((await get('/balance/countries')).status).toBe(200)
      await updateClient(ctx.store, CLIENT.id, {expire: true}, ctx.clock.now())
      const res = await get('/balance/countries')
      expect(res.status).toBe(401)
      expect(((await res.json()) as {message: string}).message).toMatch(/expired/)
    })

    it("keeps an inactive member's balance readable but refuses withdrawals (403)", async () => {
      await credit('50')
      await updateMember(ctx.db, member.user_id, {active: false}, ctx.clock.now())
      expect((await get(`/balance/user_id/${member.user_id}/summary`)).status).toBe(200)
      const res = await withdraw({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS})
      expect(res.status).toBe(403)
      expect(((await res.json()) as {message: string}).message).toMatch(/inactive/)
    })
  })

  describe('accounts', () => {
    it('reaches one account by user_id, npi and me; a member with no history has 0 USD', async () => {
      await credit('12.5')
      const bodies = []
      for (const [key, id] of [
        ['user_id', String(member.user_id)],
        ['npi', member.npi!],
        ['me', member.me!],
      ]) {
        const res = await get(`/balance/${key}/${id}/summary`)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toMatch(/^application\/json/)
        bodies.push(await res.text())
      }
      expect(new Set(bodies).size).toBe(1)
      expect(bodies[0]).toBe('{"available_funds":12.5,"currency":"USD","preferred_status":false}')

      const other = await seedMember(ctx.db, ctx.clock.now())
      expect(await (await get(`/balance/user_id/${other.user_id}/summary`)).text()).toBe('{"available_funds":0,"currency":"USD","preferred_status":false}')
      expect(await (await get(`/balance/user_id/${other.user_id}/transactions`)).json()).toEqual([])
    })

    it('answers 404 for other keys, malformed identifiers, invalid NPIs and unknown people', async () => {
      const bad = ['partner_id/1', 'user_id/abc', 'user_id/0', 'user_id/99999', 'npi/1234567890', 'npi/12345', 'me/12', 'me/99999999999']
      for (const path of bad) {
        for (const tail of ['summary', 'transactions', 'withdrawal_types']) {
          const res = await get(`/balance/${path}/${tail}`)
          expect(res.status, `${path}/${tail}`).toBe(404)
          expect(((await res.json()) as {message: string}).message).toBeTruthy()
        }
        expect((await withdraw({type: 'PAYPAL', amount: 1, member_details: PAYPAL_DETAILS}, {}, path)).status).toBe(404)
      }
      expect((await get('/balance/transactions/00000000-0000-4000-8000-000000000000')).status).toBe(404)
    })

    it('keeps amounts exact: 0.1 credited three times is exactly 0.3', async () => {
      for (let i = 0; i < 3; i++) await credit('0.1', 'INCENTIVE')
      const text = await (await get(`/balance/user_id/${member.user_id}/summary`)).text()
      expect(text).toContain('"available_funds":0.3,')
      const list = await (await get(`/balance/user_id/${member.user_id}/transactions`)).text()
      expect(list).toContain('"current_balance":0.3,')
      expect(list).not.toMatch(/0\.30000000000000004|0\.19999/)
    })
  })

  describe('withdrawals', () => {
    it('refuses a body over 16 KiB with 413 whether or not it says its length, and stores nothing', async () => {
      await credit('150.50')
      const big = JSON.stringify({type: 'PAYPAL', amount: 10, member_details: {...PAYPAL_DETAILS, pad: 'x'.repeat(20_000)}})
      const streamed = new ReadableStream({
        start(controller) {
          for (let i = 0; i < big.length; i += 4096) controller.enqueue(new TextEncoder().encode(big.slice(i, i + 4096)))
          controller.close()
        },
      })
      for (const body of [big, streamed]) {
        const res = await ctx.app.request(`/balance/user_id/${member.user_id}/withdrawals`, {
          method: 'POST',
          headers: {...AUTH, 'content-type': 'application/json'},
          body,
          duplex: 'half',
        } as RequestInit)
        expect(res.status).toBe(413)
        expect(await res.json()).toEqual({message: 'the request body is larger than 16 KiB'})
      }
      expect((await balance.listTransactions(ctx.db, await row())).length).toBe(1)
    })

    it('creates a Processing withdrawal and its fee, and shows them in both forms', async () => {
      await credit('150.50', 'HONORARIUM', 'P-1001')
      const res = await withdraw({type: 'CHECK', amount: 40.25, member_details: CHECK_DETAILS})
      expect(res.status).toBe(201)
      const created = (await res.json()) as {transaction_id: string; uri: string}
      expect(Object.keys(created)).toEqual(['transaction_id', 'uri'])
      expect(created.uri).toBe(`/balance/transactions/${created.transaction_id}`)
      expect(res.headers.get('location')).toBe(created.uri)

      const single = await get(created.uri)
      expect(single.status).toBe(200)
      const tx = (await single.json()) as Record<string, unknown>
      expect(tx).toEqual({
        id: created.transaction_id,
        amount: -40.25,
        currency: 'USD',
        type: 'WITHDRAWAL',
        type_description: expect.any(String),
        status: 'Processing',
        survey_id: null,
        created_date: '2026-01-15T12:00:00.000Z',
        properties: {withdrawal_type: 'CHECK', vendor: expect.any(String)},
      })
      expect(tx).not.toHaveProperty('current_balance')

      const list = (await (await get(`/balance/npi/${member.npi}/transactions`)).json()) as Array<Record<string, unknown>>
      expect(list.map((t) => [t.type, t.amount, t.survey_id, t.current_balance, t.status])).toEqual([
        ['HONORARIUM', 150.5, 'P-1001', 150.5, 'Completed'],
        ['WITHDRAWAL', -40.25, null, 110.25, 'Processing'],
        ['WITHDRAWAL_FEE', -2.5, null, 107.75, 'Processing'],
      ])
      expect(Object.keys(list[0]!)).toEqual(['id', 'amount', 'currency', 'type', 'type_description', 'status', 'survey_id', 'current_balance', 'created_date', 'properties'])
      expect(((await (await get(`/balance/me/${member.me}/summary`)).json()) as {available_funds: number}).available_funds).toBe(107.75)
    })

    it('answers 400 for bodies it cannot use', async () => {
      await credit('100')
      const cases: unknown[] = [
        '{not json',
        '',
        '[]',
        {amount: 10, member_details: PAYPAL_DETAILS},
        {type: 'PAYPAL', member_details: PAYPAL_DETAILS},
        {type: 'PAYPAL', amount: 10},
        {type: 'PAYPAL', amount: 10, member_details: 'x'},
        {type: 'PAYPAL', amount: 'ten', member_details: PAYPAL_DETAILS},
        {type: 'PAYPAL', amount: true, member_details: PAYPAL_DETAILS},
        {type: 'NO_SUCH_TYPE', amount: 'ten', member_details: {bogus: 1}},
        {type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS, extra: 1},
      ]
      for (const body of cases) {
        const res = await withdraw(body)
        expect(res.status, JSON.stringify(body)).toBe(400)
        expect(Object.keys((await res.json()) as object)).toEqual(['message'])
      }
      expect((await balance.getSummary(ctx.db, await row())).available_funds.toFixed()).toBe('100')
    })

    it('answers 422 naming each bad member-detail field, and changes nothing', async () => {
      await credit('100')
      const res = await withdraw({
        type: 'CHECK',
        amount: 30,
        member_details: {...CHECK_DETAILS, first_name: undefined, region: 'US-ZZ', address: 'x', phone_number: 'call me', email: 'not-an-email'},
      })
      expect(res.status).toBe(422)
      const {message} = (await res.json()) as {message: string}
      for (const field of ['first_name', 'region', 'address', 'phone_number', 'email']) expect(message).toContain(`${field}:`)
      expect(message).not.toContain('city:')

      const otherCountry = await withdraw({type: 'CHECK', amount: 30, member_details: {...CHECK_DETAILS, country: 'XX'}})
      expect(otherCountry.status).toBe(422)
      expect(((await otherCountry.json()) as {message: string}).message).toMatch(/country:/)
      const wrongRegion = await withdraw({type: 'CHECK', amount: 30, member_details: {...CHECK_DETAILS, region: 'CA-ON'}})
      expect(((await wrongRegion.json()) as {message: string}).message).toMatch(/region: "CA-ON" is not an ISO 3166-2 region of US/)
      expect(await (await get(`/balance/user_id/${member.user_id}/transactions`)).json()).toHaveLength(1)
    })

    it('accepts international phone numbers and lower-case codes', async () => {
      await credit('100')
      const res = await withdraw({
        type: 'WIRE',
        amount: 50,
        member_details: {
          ...PAYPAL_DETAILS,
          phone_number: '+44 20-7946 0958',
          address_line1: '10 Downing St',
          city: 'London',
          postal_code: 'SW1A 2AA',
          country: 'gb',
          region: 'gb-lnd',
        },
      })
      expect(res.status).toBe(201)
    })

    it('answers 422 for amounts that are not positive, too precise, or beyond funds, fee and minimum', async () => {
      await credit('30')
      for (const amount of [0, -5, '0.00', 1.005, '10.123']) {
        const res = await withdraw({type: 'PAYPAL', amount, member_details: PAYPAL_DETAILS})
        expect(res.status, String(amount)).toBe(422)
      }
      const overdraw = await withdraw({type: 'PAYPAL', amount: 30.01, member_details: PAYPAL_DETAILS})
      expect(overdraw.status).toBe(422)
      expect(((await overdraw.json()) as {message: string}).message).toMatch(/insufficient funds/)
      // CHECK costs 2.50 on top: 28 + 2.5 > 30, but 27.5 + 2.5 = 30 is fine
      expect((await withdraw({type: 'CHECK', amount: 28, member_details: CHECK_DETAILS})).status).toBe(422)
      expect((await withdraw({type: 'CHECK', amount: '27.50', member_details: CHECK_DETAILS})).status).toBe(201)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":0,')
      // below PAYPAL's 10.00 minimum balance
      await credit('9.99')
      const min = await withdraw({type: 'PAYPAL', amount: 1, member_details: PAYPAL_DETAILS})
      expect(min.status).toBe(422)
      expect(((await min.json()) as {message: string}).message).toMatch(/minimum balance of 10/)
      const unknownType = await withdraw({type: 'BITCOIN', amount: 1, member_details: PAYPAL_DETAILS})
      expect(unknownType.status).toBe(422)
    })

    it('reads a JSON number amount from the text sent, never through a float', async () => {
      await credit('30')
      const details = JSON.stringify(PAYPAL_DETAILS)
      // As a double this is exactly 10; as written it has 18 decimal places, which USD cannot have.
      const precise = await withdraw(`{"type": "PAYPAL", "amount": 10.000000000000000001, "member_details": ${details}}`)
      expect(precise.status).toBe(422)
      expect(((await precise.json()) as {message: string}).message).toMatch(/decimal places/)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":30,')
      const plain = await withdraw(`{"type": "PAYPAL", "amount": 10.10, "member_details": ${details}}`)
      expect(plain.status).toBe(201)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":19.9,')
    })

    it('answers 415 for a body not declared as JSON, and changes nothing', async () => {
      await credit('30')
      const res = await withdraw({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}, {'content-type': 'text/plain'})
      expect(res.status).toBe(415)
      expect(await res.json()).toEqual({message: 'the body must be JSON, sent with Content-Type: application/json'})
      // One check, with one answer: JSON with anything but parameters after it is refused the same way.
      for (const declared of ['application/json garbage', 'application/jsonx', 'application/json; charset']) {
        const odd = await withdraw({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}, {'content-type': declared})
        expect([declared, odd.status, await odd.json()]).toEqual([declared, 415, {message: 'the body must be JSON, sent with Content-Type: application/json'}])
      }
      for (const declared of ['application/json; charset=utf-8', 'application/merchant+json', 'APPLICATION/JSON']) {
        expect([declared, (await withdraw({type: 'PAYPAL', amount: 1, member_details: PAYPAL_DETAILS}, {'content-type': declared})).status]).toEqual([declared, 201])
      }
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":27,')
    })

    it('answers 403 for a type restricted for the person, and for a type not offered in their country', async () => {
      await credit('500')
      await balance.restrictWithdrawalType(ctx.db, await row(), 'PAYPAL', false, ctx.clock.now())
      const res = await withdraw({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS})
      expect(res.status).toBe(403)
      expect(((await res.json()) as {message: string}).message).toMatch(/restricted/)
      const types = (await (await get(`/balance/user_id/${member.user_id}/withdrawal_types`)).json()) as Array<{type: string}>
      expect(types.map((t) => t.type)).not.toContain('PAYPAL')
      await balance.restrictWithdrawalType(ctx.db, await row(), 'PAYPAL', true, ctx.clock.now())
      expect((await withdraw({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS})).status).toBe(201)

      const abroad = await seedMember(ctx.db, ctx.clock.now(), {country: 'DE'})
      const abroadTypes = (await (await get(`/balance/user_id/${abroad.user_id}/withdrawal_types`)).json()) as Array<{type: string}>
      expect(abroadTypes.map((t) => t.type)).not.toContain('ACH')
      expect(types.map((t) => t.type)).toContain('ACH')
      const ach = await withdraw({type: 'ACH', amount: 1, member_details: {}}, {}, `user_id/${abroad.user_id}`)
      expect(ach.status).toBe(403)
    })

    it('honours Idempotency-Key: same key and body answer the first result once; another body is 422', async () => {
      await credit('100')
      const body = {type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}
      const first = await withdraw(body, {'idempotency-key': 'abc-1'})
      expect(first.status).toBe(201)
      const reordered = {member_details: {email: 'ada@example.com', last_name: 'Lovelace', first_name: 'Ada'}, amount: 10, type: 'PAYPAL'}
      const again = await withdraw(reordered, {'idempotency-key': 'abc-1'})
      expect(again.status).toBe(201)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(await again.json()).toEqual(await first.json())
      const changed = await withdraw({...body, amount: 11}, {'idempotency-key': 'abc-1'})
      expect(changed.status).toBe(422)
      expect(((await changed.json()) as {message: string}).message).toMatch(/Idempotency-Key/)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":90,')
      expect((await withdraw(body, {'idempotency-key': 'abc-2'})).status).toBe(201)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":80,')
      expect((await withdraw(body, {'idempotency-key': 'x'.repeat(300)})).status).toBe(400)
    })

    it('debits once when the same Idempotency-Key arrives many times at once', async () => {
      await credit('100')
      const body = {type: 'GIFT_CARD', amount: 7, member_details: PAYPAL_DETAILS}
      const answers = await Promise.all(
        Array.from({length: 8}, async () => {
          const r = await withdraw(body, {'idempotency-key': 'burst'})
          return [r.status, await r.text()] as const
        }),
      )
      expect(new Set(answers.map(([status]) => status))).toEqual(new Set([201]))
      expect(new Set(answers.map(([, text]) => text)).size).toBe(1)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":93,')
    })

    it('scopes an Idempotency-Key to its client and account, and forgets refused requests', async () => {
      await credit('100')
      const body = {type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}
      const broke = await seedMember(ctx.db, ctx.clock.now())
      // Refused (no funds): not remembered, so the key stays free for a corrected request.
      expect((await withdraw(body, {'idempotency-key': 'k'}, `user_id/${broke.user_id}`)).status).toBe(422)
      const first = await withdraw(body, {'idempotency-key': 'k'})
      expect(first.status).toBe(201)
      // The same key and body for another account is another request.
      const otherAccount = await withdraw(body, {'idempotency-key': 'k'}, `user_id/${broke.user_id}`)
      expect(otherAccount.status).toBe(422)
      expect(((await otherAccount.json()) as {message: string}).message).toMatch(/Idempotency-Key/)
      // Another client's key space is its own.
      await registerClient(
        ctx.store,
        {name: 'Second payer', url: 'https://two.example.com', logo_url: 'https://two.example.com/l.png', redirect_uris: ['https://two.example.com/cb'], grants: ['balance']},
        ctx.clock.now(),
        {id: 'second', secret: 'second-secret'},
      )
      const second = await withdraw(body, {'idempotency-key': 'k', authorization: basicAuth('second', 'second-secret')})
      expect(second.status).toBe(201)
      expect(((await second.json()) as {transaction_id: string}).transaction_id).not.toBe(((await first.json()) as {transaction_id: string}).transaction_id)
      expect(await (await get(`/balance/user_id/${member.user_id}/summary`)).text()).toContain('"available_funds":80,')
    })
  })

  describe('status changes', () => {
    it('follows the status graph; the fee follows its withdrawal; cancelled and reversed refund', async () => {
      await credit('100')
      const make = async () => ((await (await withdraw({type: 'CHECK', amount: 20, member_details: CHECK_DETAILS})).json()) as {transaction_id: string}).transaction_id
      const funds = async () => (await balance.getSummary(ctx.db, await row())).available_funds.toFixed()
      const a = await make()
      expect(await funds()).toBe('77.5')
      await balance.updateTransactionStatus(ctx.db, a, 'OnHold', ctx.clock.now())
      expect(await funds()).toBe('77.5')
      await balance.updateTransactionStatus(ctx.db, a, 'Cancelled', ctx.clock.now())
      expect(await funds()).toBe('100')
      const list = await balance.listTransactions(ctx.db, await row())
      expect(list.map((t) => t.status)).toEqual(['Completed', 'Cancelled', 'Cancelled'])
      await expect(balance.updateTransactionStatus(ctx.db, a, 'Processing', ctx.clock.now())).rejects.toThrow(/final/)

      const b = await make()
      await balance.updateTransactionStatus(ctx.db, b, 'Completed', ctx.clock.now())
      expect(await funds()).toBe('77.5')
      await expect(balance.updateTransactionStatus(ctx.db, b, 'OnHold', ctx.clock.now())).rejects.toThrow(/cannot become OnHold/)
      await balance.updateTransactionStatus(ctx.db, b, 'Reversed', ctx.clock.now())
      expect(await funds()).toBe('100')
      const fee = (await balance.listTransactions(ctx.db, await row())).at(-1)!
      expect(fee.type).toBe('WITHDRAWAL_FEE')
      await expect(balance.updateTransactionStatus(ctx.db, fee.id, 'Cancelled', ctx.clock.now())).rejects.toThrow(/follows its withdrawal/)
      await expect(balance.updateTransactionStatus(ctx.db, b, 'Paid', ctx.clock.now())).rejects.toThrow(/status: must be one of/)
    })

    it('refuses to reverse a credit that was already spent', async () => {
      const c = await credit('50')
      await withdraw({type: 'PAYPAL', amount: 45, member_details: PAYPAL_DETAILS})
      await expect(balance.updateTransactionStatus(ctx.db, c.id, 'Reversed', ctx.clock.now())).rejects.toThrow(/below zero/)
      expect((await balance.getSummary(ctx.db, await row())).available_funds.toFixed()).toBe('5')
    })
  })

  describe('reference data and methods', () => {
    it('lists withdrawal types with fee and minimum objects', async () => {
      const types = (await (await get(`/balance/user_id/${member.user_id}/withdrawal_types`)).json()) as Array<Record<string, unknown>>
      const check = types.find((t) => t.type === 'CHECK')!
      expect(check).toEqual({
        type: 'CHECK',
        description: expect.any(String),
        fee: {amount: 2.5, currency: 'USD'},
        minimum_balance_required: {amount: 25, currency: 'USD'},
        required_fields: ['first_name', 'last_name', 'address_line1', 'city', 'region', 'postal_code', 'country'],
        optional_fields: expect.arrayContaining(['address_line2']),
      })
      expect(types.find((t) => t.type === 'PAYPAL')!.fee).toBeNull()
      for (const t of types) for (const f of [...(t.required_fields as string[]), ...(t.optional_fields as string[])]) expect(f).not.toBe('address')
    })

    it('lists ISO countries and regions', async () => {
      const countries = (await (await get('/balance/countries')).json()) as Array<{alpha_2_code: string; short_name: string}>
      expect(countries.length).toBeGreaterThan(240)
      expect(countries).toContainEqual({alpha_2_code: 'US', short_name: 'United States'})
      const regions = (await (await get('/balance/countries/US/regions')).json()) as Array<Record<string, string>>
      expect(regions).toContainEqual({region_code: 'US-CA', name: 'California', alpha_2_code: 'US', postal_abbreviation: 'CA'})
      expect((await get('/balance/countries/us/regions')).status).toBe(200)
      expect((await get('/balance/countries/XX/regions')).status).toBe(404)
      expect(await (await get('/balance/countries/AQ/regions')).json()).toEqual([])
    })

    it('answers 405 with Allow for unsupported methods', async () => {
      const cases: Array<[string, string, string]> = [
        ['DELETE', `/balance/user_id/${member.user_id}/summary`, 'GET, HEAD'],
        ['POST', `/balance/user_id/${member.user_id}/transactions`, 'GET, HEAD'],
        ['PUT', '/balance/transactions/abc', 'GET, HEAD'],
        ['GET', `/balance/user_id/${member.user_id}/withdrawals`, 'POST'],
        ['PATCH', '/balance/countries', 'GET, HEAD'],
        ['POST', '/balance/countries/US/regions', 'GET, HEAD'],
      ]
      for (const [method, path, allow] of cases) {
        const res = await ctx.app.request(path, {method, headers: AUTH})
        expect(res.status, `${method} ${path}`).toBe(405)
        expect(res.headers.get('allow')).toBe(allow)
        expect(Object.keys((await res.json()) as object)).toEqual(['message'])
      }
    })

    it('documents the seven endpoints in /openapi.json', async () => {
      const doc = (await (await ctx.app.request('/openapi.json')).json()) as {paths: Record<string, unknown>}
      expect(Object.keys(doc.paths)).toEqual(
        expect.arrayContaining([
          '/balance/{key}/{id}/summary',
          '/balance/{key}/{id}/transactions',
          '/balance/transactions/{id}',
          '/balance/{key}/{id}/withdrawal_types',
          '/balance/{key}/{id}/withdrawals',
          '/balance/countries',
          '/balance/countries/{countryCode}/regions',
        ]),
      )
    })
  })
})
