import {AppError} from '../../errors.js'

/**
 * Refuses (400) a JSON text that is valid but ambiguous or too deep to handle, before anything
 * else reads it: a key repeated within one object (JSON.parse keeps the last value, the exact
 * amount reader refuses the text; a body must mean one thing to every reader of it), and nesting
 * deeper than `maxDepthLevels` (the exact reader recurses per level, and a 16 KiB body can nest
 * 8,000 levels, past the stack). One pass over the text without recursion; `text` must already
 * have parsed as JSON. The top-level value is level 1.
 */
export function checkJsonStructure(text: string, maxDepthLevels: number): void {
  // Per open container: the keys seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = []
  // The key each open object is at (for naming a duplicate by its path).
  const path: string[] = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    if (ch === QUOTE) {
      let end = i + 1
      let escaped = false
      for (let c = text.charCodeAt(end); c !== QUOTE; c = text.charCodeAt(end)) {
        if (c === BACKSLASH) {
          escaped = true
          end += 2
        } else end += 1
      }
      const keys = open[open.length - 1]
      if (expectKey && keys) {
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end)
        if (keys.has(key)) throw new AppError('bad_request', `duplicate key ${keyPath([...path.slice(0, open.length - 1).filter(Boolean), key])}: a key may appear once per object`)
        keys.add(key)
        path[open.length - 1] = key
      }
      expectKey = false
      i = end
    } else if (ch === OPEN_BRACE || ch === OPEN_BRACKET) {
      if (open.length >= maxDepthLevels) throw new AppError('bad_request', `the body nests deeper than ${maxDepthLevels} levels`)
      open.push(ch === OPEN_BRACE ? new Set() : null)
      // An array's slot stays empty: a duplicate is named by the keys of the objects around it.
      path[open.length - 1] = ''
      expectKey = ch === OPEN_BRACE
    } else if (ch === CLOSE_BRACE || ch === CLOSE_BRACKET) {
      open.pop()
      expectKey = false
    } else if (ch === COMMA) {
      expectKey = open[open.length - 1] != null
    }
  }
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c

/** `member_details.email`; a key that is not a plain name is quoted (it came from the caller). */
function keyPath(keys: string[]): string {
  return keys.map((key) => (/^[A-Za-z_][\w-]{0,63}$/.test(key) ? key : JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key))).join('.')
}
