import {describe, expect, it} from 'vitest'
import {toJson} from '../../../src/lib/exact-json.js'
import {Money, amountText, formatMoney, parseAmount} from '../../../src/interfaces/balance/money.js'

describe('money', () => {
  it('writes decimals as JSON numbers from their exact text, never in exponent form', () => {
    expect(toJson({a: new Money('150.50'), b: new Money('-25'), c: new Money('-0'), d: new Money('1e-7'), e: [new Money('12345678901234567890.12')]})).toBe(
      '{"a":150.5,"b":-25,"c":0,"d":0.0000001,"e":[12345678901234567890.12]}',
    )
    expect(toJson({s: 'x"y', n: null, u: undefined, nested: {t: true}})).toBe('{"s":"x\\"y","n":null,"nested":{"t":true}}')
    expect(JSON.parse(toJson({list: [{x: new Money('0.3')}]}, 2))).toEqual({list: [{x: 0.3}]})
    expect(amountText(new Money('0.1').plus('0.2'))).toBe('0.3')
    expect(formatMoney(new Money('-2.5'), 'USD')).toBe('-2.50 USD')
  })

  it('reads amounts exactly and refuses what is not a positive USD amount', () => {
    expect(amountText(parseAmount(0.1))).toBe('0.1')
    expect(amountText(parseAmount('25.50'))).toBe('25.5')
    expect(amountText(parseAmount(999999999.99))).toBe('999999999.99')
    for (const bad of [0, -1, '0.001', 1.005, 1e21, '1000000000.01']) expect(() => parseAmount(bad), String(bad)).toThrow(expect.objectContaining({status: 422}))
    for (const bad of ['ten', '', '1,5', true, null, {}, Number.NaN, '1e3']) expect(() => parseAmount(bad), String(bad)).toThrow(expect.objectContaining({status: 400}))
  })
})
