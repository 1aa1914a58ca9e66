import {describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import {asWithdrawalRequest, readWithdrawalText, requirePlainAmount, withdrawalRequest} from '../../../src/interfaces/balance/body.js'
import {isDecimal} from '../../../src/interfaces/balance/money.js'
import type {WithdrawalRequest} from '../../../src/interfaces/balance/schema.js'
import {PAYPAL_DETAILS} from './setup.js'

/*
 * C's edge parser (src/interfaces/balance/body.ts) on its own: the body text read once, the schema
 * once, and the amount kept as the exact text the client wrote.
 */

/** What a call threw, checked to be an AppError: its code and message. */
function refusal(call: () => unknown): {code: string; message: string} {
  try {
    call()
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    return {code: (error as AppError).code, message: (error as AppError).message}
  }
  throw new Error('expected a refusal, but the call returned')
}

describe('readWithdrawalText', () => {
  it('refuses an empty or blank body as one that is missing, before parsing it', () => {
    for (const text of ['', '   ', '\n\t ']) {
      expect(refusal(() => readWithdrawalText(text))).toEqual({code: 'bad_request', message: 'a JSON body with type, amount and member_details is required'})
    }
  })

  it('keeps each top-level number as written', () => {
    const read = readWithdrawalText(`{"type": "PAYPAL", "amount": 10.10, "member_details": ${JSON.stringify(PAYPAL_DETAILS)}}`)
    expect(read.numbers.get('amount')).toBe('10.10')
  })
})

describe('withdrawalRequest', () => {
  it('takes the amount from the text the client wrote when the body came as text', () => {
    const read = readWithdrawalText(`{"type": "PAYPAL", "amount": 10.10, "member_details": ${JSON.stringify(PAYPAL_DETAILS)}}`)
    const request = withdrawalRequest(read.value, read.numbers)
    expect([request.amount.toString(), request.amountWritten]).toEqual(['10.1', '10.10'])
  })

  it("takes an object's amount as given when there is no text (the CLI, in-process callers)", () => {
    const fromString = withdrawalRequest({type: 'PAYPAL', amount: '10.50', member_details: PAYPAL_DETAILS})
    expect([fromString.amount.toString(), fromString.amountWritten]).toEqual(['10.5', '10.50'])
    const fromNumber = withdrawalRequest({type: 'PAYPAL', amount: 12.25, member_details: PAYPAL_DETAILS})
    expect([fromNumber.amount.toString(), fromNumber.amountWritten]).toEqual(['12.25', 12.25])
  })
})

describe('asWithdrawalRequest', () => {
  it('passes a request already read through as it is, and reads a plain object', () => {
    const read = withdrawalRequest({type: 'PAYPAL', amount: '5', member_details: PAYPAL_DETAILS})
    expect(asWithdrawalRequest(read)).toBe(read)
    const plain = asWithdrawalRequest({type: 'PAYPAL', amount: '7.5', member_details: PAYPAL_DETAILS})
    expect(isDecimal(plain.amount)).toBe(true)
    expect([plain.amount.toString(), plain.amountWritten]).toEqual(['7.5', '7.5'])
  })
})

describe('requirePlainAmount', () => {
  const written = (amountWritten: string | number) => ({amountWritten}) as WithdrawalRequest

  it('refuses a number written with an exponent as the schema refuses such a string', () => {
    const asText = refusal(() => withdrawalRequest({type: 'PAYPAL', amount: '1e2', member_details: PAYPAL_DETAILS}))
    for (const exponent of ['1e2', '1E2', '2.5e-1']) expect(refusal(() => requirePlainAmount(written(exponent)))).toEqual(asText)
  })

  it('passes plain decimals as written, and a number an in-process caller gave as the number it is', () => {
    for (const plain of ['100', '10.10', '0.5']) expect(() => requirePlainAmount(written(plain))).not.toThrow()
    for (const number of [100, 1e21]) expect(() => requirePlainAmount(written(number))).not.toThrow()
  })
})
