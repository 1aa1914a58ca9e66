import type {AnswerFormat} from './format.js'
import type {FormatList} from './formats.js'

/** What an Accept header agreed on: a format of the list, or undefined (406). */
export type Negotiate = (accept: string | undefined) => AnswerFormat | undefined

/**
 * The answer format for an Accept header, among `formats`: none, `*\/*` or `application/*` → the
 * default (the list's first); a listed media type → that format (the highest q wins, the earlier
 * one on a tie); anything else → undefined (406). Media type parameters other than q are
 * ignored. The lookup table is made once per list, not per request.
 */
export function negotiator(formats: FormatList): Negotiate {
  const fallback = formats[0]
  const byType = new Map<string, AnswerFormat>([
    ['*/*', fallback],
    ['application/*', fallback],
  ])
  for (const format of formats) byType.set(format.mediaType.toLowerCase(), format)
  return function negotiate(accept) {
    if (accept === undefined || accept.trim() === '') return fallback
    let best: {format: AnswerFormat; q: number} | undefined
    for (const range of accept.split(',')) {
      const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase())
      const q = quality(params)
      if (!(q > 0)) continue
      const format = byType.get(type)
      if (format && (!best || q > best.q)) best = {format, q}
    }
    return best?.format
  }
}

/** A media range's q parameter (the last one given), 1 without one. */
function quality(params: readonly string[]): number {
  let q = 1
  for (const param of params) {
    const match = /^q=([0-9.]+)$/.exec(param)
    if (match) q = Number(match[1])
  }
  return q
}

/** Words joined as a sentence offers a choice: "a", "a or b", "a, b or c". */
export function either(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`
}
