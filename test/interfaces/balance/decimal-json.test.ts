import {describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import {readExactJson} from '../../../src/interfaces/balance/decimal-json.js'

/*
 * C's one-pass JSON reader (src/interfaces/balance/decimal-json.ts) against JSON.parse itself: the
 * same values for every text JSON.parse takes, and "not valid JSON" (an AppError, never a bare
 * SyntaxError) for every text it refuses; then what only this reader adds: duplicate keys named by
 * their path, and the numbers' exact text.
 */

const read = (text: string) => readExactJson(text, 10)

/** What reading `text` gave: its value, or the AppError's message. */
function outcome(text: string): {value: unknown} | {refused: string} {
  try {
    return {value: read(text).value}
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    return {refused: (error as AppError).message}
  }
}

describe('readExactJson reads as JSON.parse does', () => {
  it('gives the same value for what JSON.parse takes: every whitespace, literal, digit and escape', () => {
    const texts = [
      '[1,2]',
      '[9, 19, -9, 0.5, 1e2]',
      '{\n"a"\r:\t1 , "b" :\n[ true , false , null ]\r\n}',
      '{"a":{"b":[{"c":"d"}]}}',
      '"\\" \\\\ \\/ \\b \\f \\n \\r \\t"',
      '"caf\\u00e9 \\u00E9 \\uD83D\\uDE00"',
      '{"a":true,"b":false,"c":null}',
      ' \t\r\n{} \n',
    ]
    for (const text of texts) expect([text, outcome(text)]).toEqual([text, {value: JSON.parse(text)}])
  })

  it('refuses what JSON.parse refuses, as not valid JSON', () => {
    const texts = ['[1}', '{"a":1]', '{a":1}', '{ab":1}', '"\\x"', '"\\u12"', '"\\uZZZZ"', '"\\u00G0"', 'tru', '[1,]', '{"a" 1}', '[1 2]', '"a', '01']
    for (const text of texts) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError)
      expect([text, outcome(text)]).toEqual([text, {refused: 'the body is not valid JSON'}])
    }
  })

  it('makes "__proto__" an own, enumerable, writable member, as JSON.parse does, never a prototype', () => {
    const text = '{"__proto__": {"polluted": 1}, "a": 2}'
    const value = read(text).value as Record<string, unknown>
    const parsed = JSON.parse(text) as Record<string, unknown>
    expect(Object.keys(value)).toEqual(Object.keys(parsed))
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')).toEqual(Object.getOwnPropertyDescriptor(parsed, '__proto__'))
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect((value as {polluted?: unknown}).polluted).toBeUndefined()
  })
})

describe('what readExactJson adds', () => {
  it('names a repeated key by its whole path, however deep', () => {
    expect(outcome('{"a":{"b":{"c":1,"c":2}}}')).toEqual({refused: 'duplicate key a.b.c: a key may appear once per object'})
    expect(outcome('{"a":[{"x":1,"x":2}]}')).toEqual({refused: 'duplicate key a.x: a key may appear once per object'})
  })

  it('quotes a key that is not a plain name, and cuts one over 64 characters', () => {
    expect(outcome('{"a b":1,"a b":2}')).toEqual({refused: 'duplicate key "a b": a key may appear once per object'})
    const plain64 = `k${'x'.repeat(63)}`
    expect(outcome(`{"${plain64}":1,"${plain64}":2}`)).toEqual({refused: `duplicate key ${plain64}: a key may appear once per object`})
    const odd64 = `1${'x'.repeat(63)}`
    expect(outcome(`{"${odd64}":1,"${odd64}":2}`)).toEqual({refused: `duplicate key "${odd64}": a key may appear once per object`})
    const long = 'y'.repeat(70)
    expect(outcome(`{"${long}":1,"${long}":2}`)).toEqual({refused: `duplicate key "${'y'.repeat(64)}…": a key may appear once per object`})
  })

  it("keeps the exact text of the top-level object's numbers only", () => {
    const {numbers} = read('{"amount": 10.10, "n": -0.50e1, "inner": {"x": 1.10}, "list": [2.20]}')
    expect(Object.fromEntries(numbers)).toEqual({amount: '10.10', n: '-0.50e1'})
  })
})
