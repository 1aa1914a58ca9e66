import {AppError} from '../../errors.js'

/** A JSON text read once: its value as JSON.parse gives it, and the exact text of the top-level object's numbers. */
export interface ExactJson {
  value: unknown
  /** The source text of each number that is a member of the top-level object, by key (`10.10`, not 10.1). */
  numbers: ReadonlyMap<string, string>
}

/**
 * Reads a JSON text in one pass, without recursion, as JSON.parse reads it (same grammar, same
 * values), keeping each top-level number's text so an amount is never read through a float. The
 * same pass refuses (400) a text that is valid but ambiguous or too deep: a key repeated within
 * one object (JSON.parse keeps the last value; a body must mean one thing to every reader), and
 * nesting deeper than `maxDepthLevels` (the top-level value is level 1). A text that is no JSON at
 * all is refused as such even when a repeated key comes first, as the earlier separate passes
 * answered: the first structure problem is kept and thrown only once the whole text has parsed.
 */
export function readExactJson(text: string, maxDepthLevels: number): ExactJson {
  const reader = new JsonReader(text, maxDepthLevels)
  const value = reader.document()
  if (reader.problem) throw reader.problem
  return {value, numbers: reader.numbers}
}

const notJson = () => new AppError('bad_request', 'the body is not valid JSON')

type Frame = {object: Record<string, unknown>; keys: Set<string>; key: string} | {array: unknown[]}

class JsonReader {
  i = 0
  /** The first duplicate key or over-deep level, in text order. */
  problem: AppError | undefined
  readonly numbers = new Map<string, string>()
  private readonly stack: Frame[] = []
  private numberText = ''

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  document(): unknown {
    let value = this.openOrScalar()
    // Each finished value goes into the container around it; a container finishes at its close.
    while (this.stack.length > 0) {
      const frame = this.stack[this.stack.length - 1]!
      this.attach(frame, value)
      const next = this.after(frame)
      if (next === 'more') value = this.openOrScalar()
      else value = this.close()
    }
    this.skipSpace()
    if (this.i !== this.text.length) throw notJson()
    return value
  }

  /** Reads a scalar, or opens containers until one holds a first value (or closes empty). */
  private openOrScalar(): unknown {
    for (;;) {
      this.skipSpace()
      const ch = this.text.charCodeAt(this.i)
      if (ch !== OPEN_BRACE && ch !== OPEN_BRACKET) return this.scalar(ch)
      this.i++
      this.open(ch === OPEN_BRACE)
      this.skipSpace()
      const closing = this.text.charCodeAt(this.i)
      if (closing === (ch === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
        this.i++
        return this.close()
      }
      if (ch === OPEN_BRACE) this.key()
    }
  }

  private open(isObject: boolean): void {
    if (this.stack.length >= this.maxDepth) this.problem ??= new AppError('bad_request', `the body nests deeper than ${this.maxDepth} levels`)
    this.stack.push(isObject ? {object: {}, keys: new Set(), key: ''} : {array: []})
  }

  private close(): unknown {
    const frame = this.stack.pop()!
    return 'array' in frame ? frame.array : frame.object
  }

  /** After a member: a comma (then the next key, for an object) or the container's close. */
  private after(frame: Frame): 'more' | 'closed' {
    this.skipSpace()
    const ch = this.text.charCodeAt(this.i++)
    if (ch === COMMA) {
      if ('object' in frame) {
        this.skipSpace()
        this.key()
      }
      return 'more'
    }
    if (ch === ('array' in frame ? CLOSE_BRACKET : CLOSE_BRACE)) return 'closed'
    throw notJson()
  }

  /** An object's key and its colon; a repeated key is named by the keys of the objects around it. */
  private key(): void {
    if (this.text.charCodeAt(this.i) !== QUOTE) throw notJson()
    const key = this.string()
    this.skipSpace()
    if (this.text.charCodeAt(this.i++) !== COLON) throw notJson()
    const frame = this.stack[this.stack.length - 1] as Extract<Frame, {object: unknown}>
    if (frame.keys.has(key)) {
      const around = this.stack.slice(0, -1).map((f) => ('object' in f ? f.key : ''))
      this.problem ??= new AppError('bad_request', `duplicate key ${keyPath([...around.filter(Boolean), key])}: a key may appear once per object`)
    }
    frame.keys.add(key)
    frame.key = key
  }

  private attach(frame: Frame, value: unknown): void {
    if ('array' in frame) {
      frame.array.push(value)
      return
    }
    // An own "__proto__" member, as JSON.parse makes it, rather than a new prototype.
    if (frame.key === '__proto__') Object.defineProperty(frame.object, frame.key, {value, enumerable: true, writable: true, configurable: true})
    else frame.object[frame.key] = value
    if (this.stack.length === 1 && typeof value === 'number') this.numbers.set(frame.key, this.numberText)
  }

  private scalar(ch: number): unknown {
    if (ch === QUOTE) return this.string()
    if (ch === MINUS || (ch >= DIGIT_0 && ch <= DIGIT_9)) return this.number()
    for (const [word, value] of LITERALS) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length
        return value
      }
    }
    throw notJson()
  }

  private number(): number {
    NUMBER.lastIndex = this.i
    const match = NUMBER.exec(this.text)
    if (!match) throw notJson()
    this.numberText = match[0]
    this.i += match[0].length
    return Number(match[0])
  }

  /** A string at the cursor (its opening quote), by JSON's rules: no raw control characters, only JSON's escapes. */
  private string(): string {
    const start = this.i
    let escaped = false
    let end = start + 1
    for (let c = this.text.charCodeAt(end); c !== QUOTE; c = this.text.charCodeAt(end)) {
      if (!(c >= 0x20)) throw notJson() // a control character, or the text's end (NaN)
      if (c === BACKSLASH) {
        escaped = true
        end += escapeLength(this.text, end)
      } else end += 1
    }
    this.i = end + 1
    return escaped ? (JSON.parse(this.text.slice(start, end + 1)) as string) : this.text.slice(start + 1, end)
  }

  private skipSpace(): void {
    for (let c = this.text.charCodeAt(this.i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = this.text.charCodeAt(++this.i));
  }
}

/** The length of the escape at `at` (its backslash): 2, or 6 for \uXXXX; anything else is no JSON. */
function escapeLength(text: string, at: number): number {
  const next = text[at + 1]
  if (next !== undefined && '"\\/bfnrt'.includes(next)) return 2
  if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) return 6
  throw notJson()
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const LITERALS: readonly [string, unknown][] = [
  ['true', true],
  ['false', false],
  ['null', null],
]

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a
const MINUS = 0x2d
const DIGIT_0 = 0x30
const DIGIT_9 = 0x39

/** `member_details.email`; a key that is not a plain name is quoted (it came from the caller). */
function keyPath(keys: string[]): string {
  return keys.map((key) => (/^[A-Za-z_][\w-]{0,63}$/.test(key) ? key : JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key))).join('.')
}
