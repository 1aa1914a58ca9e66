import {Decimal} from 'decimal.js'
import {AppError} from '../../errors.js'
import {decimalText} from '../../lib/exact-json.js'

/**
 * The one Decimal constructor of the ledger. Its own clone so no other module's settings change
 * ours; 40 significant digits is far beyond any sum of in-range amounts, so adding never rounds.
 */
export const Money = Decimal.clone({precision: 40, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -40, toExpPos: 40})
export type Money = Decimal

/** Minor units per ISO 4217 currency this ledger keeps accounts in. */
const MINOR_UNITS: Record<string, number> = {USD: 2}
export const DEFAULT_CURRENCY = 'USD'

/** Largest single posting; keeps every amount well inside a double's exact range for JSON input. */
export const MAX_AMOUNT = new Money('1000000000')

export const ZERO = new Money(0)

export const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)$/

export function isDecimal(value: unknown): value is Decimal {
  return Decimal.isDecimal(value)
}

/**
 * Reads an amount from JSON or a flag. A JSON number is taken from its shortest text form, which is
 * exactly what the sender wrote for any amount within MAX_AMOUNT and the currency's decimals.
 * Wrong kinds are 400 (the body cannot be understood); a number that is not a valid amount is 422.
 */
export function parseAmount(value: unknown, currency: string = DEFAULT_CURRENCY, field = 'amount'): Decimal {
  let text: string
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new AppError('bad_request', `${field}: must be a decimal number`)
    text = String(value)
    if (/e/i.test(text)) throw new AppError('unprocessable', `${field}: ${text} is out of range`)
  } else if (typeof value === 'string') {
    text = value.trim()
    if (!DECIMAL_TEXT.test(text)) throw new AppError('bad_request', `${field}: "${value}" is not a decimal number`)
  } else {
    throw new AppError('bad_request', `${field}: must be a decimal number`)
  }
  return checkAmount(new Money(text), currency, field)
}

/** An exact amount's value: greater than 0, within the currency's decimals and MAX_AMOUNT (422 otherwise). */
export function checkAmount(amount: Decimal, currency: string = DEFAULT_CURRENCY, field = 'amount'): Decimal {
  if (amount.lte(0)) throw new AppError('unprocessable', `${field}: must be greater than 0`)
  const places = MINOR_UNITS[currency] ?? 2
  if (amount.decimalPlaces() > places) throw new AppError('unprocessable', `${field}: ${currency} amounts have at most ${places} decimal places`)
  if (amount.gt(MAX_AMOUNT)) throw new AppError('unprocessable', `${field}: must be at most ${MAX_AMOUNT.toFixed()}`)
  return amount
}

/** The exact decimal text an amount is stored and sent as: no exponent, no trailing zeros, no "-0". */
export function amountText(amount: Decimal): string {
  return decimalText(amount)
}

/** For people: fixed to the currency's minor units, with the code (`-25.00 USD`). */
export function formatMoney(amount: Decimal, currency: string): string {
  return `${amount.toFixed(MINOR_UNITS[currency] ?? 2)} ${currency}`
}
