import {Decimal} from 'decimal.js'

/** A Decimal's exact text as a JSON number: `0.3`, `-25`, never an exponent, and `0` for minus zero. */
export function decimalText(value: Decimal): string {
  return value.isZero() ? '0' : value.toFixed()
}

/**
 * JSON.stringify, except that a Decimal becomes a JSON number written from its exact text
 * (`0.3`, `-25`), so no amount ever passes through a float on its way out.
 */
export function toJson(value: unknown, indent = 0): string {
  return write(value, indent, '')
}

function write(value: unknown, indent: number, pad: string): string {
  if (Decimal.isDecimal(value)) return decimalText(value)
  if (value === null || typeof value !== 'object') {
    return value === undefined || typeof value === 'function' ? 'null' : JSON.stringify(value)
  }
  const inner = indent ? pad + ' '.repeat(indent) : ''
  const open = indent ? `\n${inner}` : ''
  const close = indent ? `\n${pad}` : ''
  const sep = indent ? `,\n${inner}` : ','
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    return `[${open}${value.map((item) => write(item, indent, inner)).join(sep)}${close}]`
  }
  if (typeof (value as {toJSON?: unknown}).toJSON === 'function') return write((value as {toJSON: () => unknown}).toJSON(), indent, pad)
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function')
  if (entries.length === 0) return '{}'
  const colon = indent ? ': ' : ':'
  return `{${open}${entries.map(([k, v]) => JSON.stringify(k) + colon + write(v, indent, inner)).join(sep)}${close}}`
}
