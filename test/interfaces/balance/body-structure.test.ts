import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import {readExactJson} from '../../../src/interfaces/balance/decimal-json.js'
import * as balance from '../../../src/interfaces/balance/service.js'
import {findMemberBy} from '../../../src/registry/repository.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {AUTH, PAYPAL_DETAILS, seedClients, seedMember} from './setup.js'

const refusal = (text: string, depth = 32): string | undefined => {
  try {
    readExactJson(text, depth)
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).status).toBe(400)
    return (error as AppError).message
  }
}

describe('readExactJson: the structure checks', () => {
  it('names a repeated key by its path, however it is spelled', () => {
    expect(refusal('{"amount":"abc","amount":10}')).toMatch(/^duplicate key amount\b/)
    expect(refusal('{"amount":10,"amount":10}')).toMatch(/^duplicate key amount\b/)
    expect(refusal('{"a\\u006dount":1, "amount" : 2}')).toMatch(/^duplicate key amount\b/)
    expect(refusal('{"member_details":{"email":"a","first_name":"b","email":"c"}}')).toMatch(/^duplicate key member_details\.email\b/)
    expect(refusal('{"x":[{"k":1},{"k":1,"k":2}]}')).toMatch(/^duplicate key x\.k\b/)
    expect(refusal('{"a b\\n":1,"a b\\n":2}')).toMatch(/^duplicate key "a b\\n"/)
  })

  it('lets the same key appear in different objects, and key-like text inside strings', () => {
    for (const ok of ['{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}', '{"a":"\\",\\"a\\":","b":"{[\\\\"}', '{"a":"x","b":"a"}', '[1,"a",{"a":1},{"a":2}]', '"just a string"', '{}']) {
      expect(refusal(ok), ok).toBeUndefined()
    }
  })

  it('refuses nesting past the bound, counting the top level as level 1', () => {
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
    expect(refusal(nested(32))).toBeUndefined()
    expect(refusal(nested(33))).toBe('the body nests deeper than 32 levels')
    expect(refusal(`{"m":${'{"a":'.repeat(31)}1${'}'.repeat(31)}}`)).toBeUndefined()
    expect(refusal(`{"m":${'{"a":'.repeat(32)}1${'}'.repeat(32)}}`)).toBe('the body nests deeper than 32 levels')
    // Brackets inside strings are text, not nesting.
    expect(refusal(`{"m":"${'['.repeat(100)}"}`)).toBeUndefined()
  })
})

describe('readExactJson: one pass for the value, the exact numbers and the checks', () => {
  it('reads what JSON.parse reads, and keeps the top-level numbers as written', () => {
    const text = '{"type":"paypal","amount":10.10,"member_details":{"n":1.50,"a":[1e2,-0,"x\\u0041"]},"__proto__":{"p":true},"z":null}'
    const {value, numbers} = readExactJson(text, 32)
    expect(value).toEqual(JSON.parse(text))
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.keys(value as object)).toEqual(Object.keys(JSON.parse(text)))
    expect([...numbers]).toEqual([['amount', '10.10']])
  })

  it('answers "not valid JSON" for any text JSON.parse refuses, even after a repeated key or past the depth', () => {
    for (const bad of [
      '{"a":1,"a":2',
      '{"a":1,"a":2,}',
      `${'['.repeat(40)}1`,
      '[01]',
      '{"a":"\\x"}',
      '"\u0001"',
      '\ufeff{}',
      '{"a" 1}',
      '[1,]',
      'nul',
      '-',
      '1.',
      '.5',
      '+1',
      '"\\u12"',
    ]) {
      expect(() => JSON.parse(bad), bad).toThrow()
      expect(refusal(bad), bad).toBe('the body is not valid JSON')
    }
  })
})

describe('a withdrawal body that is ambiguous or too deep', () => {
  let ctx: TestContext
  let member: Awaited<ReturnType<typeof seedMember>>

  beforeEach(async () => {
    ctx = await freshApp()
    await seedClients(ctx.store, ctx.clock.now())
    member = await seedMember(ctx.db, ctx.clock.now())
    const row = (await findMemberBy(ctx.db, 'id', member.user_id))!
    await balance.postCredit(ctx.db, row, {type: 'HONORARIUM', amount: '100'}, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const post = (text: string) =>
    ctx.app.request(`/balance/user_id/${member.user_id}/withdrawals`, {method: 'POST', headers: {...AUTH, 'content-type': 'application/json'}, body: text})
  const details = JSON.stringify(PAYPAL_DETAILS)

  it('answers 400 in C shape for a repeated key, and debits nothing', async () => {
    for (const text of [
      `{"amount":"abc","amount":10,"type":"PAYPAL","member_details":${details}}`,
      `{"amount":10,"type":"PAYPAL","type":"CHECK","member_details":${details}}`,
      `{"amount":10,"type":"PAYPAL","member_details":{"first_name":"Ada","last_name":"Lovelace","email":"x@example.com","email":"ada@example.com"}}`,
    ]) {
      const res = await post(text)
      expect(res.status, text).toBe(400)
      const body = (await res.json()) as {message: string}
      expect(Object.keys(body)).toEqual(['message'])
      expect(body.message).toMatch(/^duplicate key (amount|type|member_details\.email)\b/)
    }
    const row = (await findMemberBy(ctx.db, 'id', member.user_id))!
    expect((await balance.getSummary(ctx.db, row)).available_funds.toString()).toBe('100')
    expect(ctx.logs.filter((line) => line.startsWith('error'))).toEqual([])
  })

  it('answers 400 in C shape for member_details nested thousands of levels deep', async () => {
    const levels = 7000
    for (const text of [
      `{"amount":10,"type":"PAYPAL","member_details":{"first_name":${'['.repeat(levels)}${']'.repeat(levels)}}}`,
      `{"amount":10,"type":"PAYPAL","member_details":${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}}`,
    ]) {
      expect(text.length).toBeLessThan(16 * 1024)
      const res = await post(text)
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({message: `the body nests deeper than 32 levels`})
    }
    expect(ctx.logs.filter((line) => line.startsWith('error'))).toEqual([])
  })

  it('still takes a well-formed body', async () => {
    const res = await post(`{"amount":10,"type":"PAYPAL","member_details":${details}}`)
    expect(res.status).toBe(201)
  })
})
