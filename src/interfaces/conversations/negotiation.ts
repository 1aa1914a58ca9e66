export type Format = 'json' | 'xml'

export const JSON_TYPE = 'application/vnd.service-v1+json'
export const XML_TYPE = 'application/vnd.service-v1+xml'

/**
 * The answer format for an Accept header: none, `*\/*` or `application/*` → JSON; the vendor JSON
 * or XML type → that format (the highest q wins, the earlier one on a tie); anything else →
 * undefined (406). Media type parameters other than q are ignored.
 */
export function negotiate(accept: string | undefined): Format | undefined {
  if (accept === undefined || accept.trim() === '') return 'json'
  let best: {format: Format; q: number} | undefined
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase())
    let q = 1
    for (const param of params) {
      const match = /^q=([0-9.]+)$/.exec(param)
      if (match) q = Number(match[1])
    }
    if (!(q > 0)) continue
    const format: Format | undefined = type === XML_TYPE ? 'xml' : type === JSON_TYPE || type === '*/*' || type === 'application/*' ? 'json' : undefined
    if (format && (!best || q > best.q)) best = {format, q}
  }
  return best?.format
}
