/*
 * A data-call document read as a stream: the elements of its `conversations` array (or of the
 * document itself when it is a bare array) one at a time, each parsed on its own, so importing an
 * archive holds one conversation's objects at a time instead of the whole document's. The
 * structure around the elements (the other keys, commas, brackets) is checked here; each element
 * and each other key's value is checked by JSON.parse.
 */

/** The document's shape when it holds no conversations array to stream. */
export class NotADocument extends Error {
  constructor(readonly value: unknown) {
    super('not a data-call document')
  }
}

type State = 'start' | 'key-or-end' | 'key' | 'colon' | 'value' | 'comma-or-end' | 'element-or-end' | 'element' | 'element-comma-or-end' | 'end' | 'top-value'

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const STRING_STOP = /["\\]/g

/** One JSON value's text, gathered across chunks; `done` once it is complete. */
class ValueText {
  private pieces: string[] = []
  private depth = 0
  private inString = false
  private escaped = false
  private primitive = false
  done = false

  /**
   * Reads from `chunk` at `from` (the value's first character on the first call); returns where
   * it stopped: after the value's last character, or at the character that ended a bare number
   * or literal (not part of it), or at the chunk's end.
   */
  feed(chunk: string, from: number, first: boolean): number {
    let i = from
    if (first) {
      const c = chunk[i]
      if (c === '{' || c === '[') this.depth = 1
      else if (c === '"') this.inString = true
      else this.primitive = true
      i++
    }
    const start = from
    while (i < chunk.length) {
      if (this.escaped) {
        this.escaped = false
        i++
        continue
      }
      if (this.inString) {
        STRING_STOP.lastIndex = i
        const stop = STRING_STOP.exec(chunk)
        if (!stop) {
          i = chunk.length
          break
        }
        i = stop.index + 1
        if (stop[0] === '\\') this.escaped = true
        else {
          this.inString = false
          if (this.depth === 0 && !this.primitive) return this.finish(chunk, start, i)
        }
        continue
      }
      const c = chunk[i]!
      if (this.primitive) {
        if (c === ',' || c === '}' || c === ']' || WHITESPACE.has(c)) return this.finish(chunk, start, i)
        i++
        continue
      }
      if (c === '"') this.inString = true
      else if (c === '{' || c === '[') this.depth++
      else if (c === '}' || c === ']') {
        this.depth--
        if (this.depth === 0) return this.finish(chunk, start, i + 1)
      }
      i++
    }
    this.pieces.push(chunk.slice(start))
    return chunk.length
  }

  private finish(chunk: string, start: number, end: number): number {
    this.pieces.push(chunk.slice(start, end))
    this.done = true
    return end
  }

  /** The value, parsed (at the end of the input, a bare number or literal ends there). */
  parse(): unknown {
    return JSON.parse(this.pieces.join(''))
  }
}

/**
 * Reads a document from text chunks and yields each conversation's parsed value. A document that
 * is valid JSON but has no `conversations` array (or is not an object or array) ends with a
 * NotADocument carrying what stood there (the top-level value, or `{conversations: …}`) so the
 * caller can say what is wrong in the schema's words; anything that is not JSON throws a
 * SyntaxError.
 */
export async function* documentConversations(chunks: AsyncIterable<string>): AsyncGenerator<unknown, void, undefined> {
  let state: State = 'start'
  let topArray = false
  let key = ''
  let keyText: ValueText | undefined
  let value: ValueText | undefined
  let foundConversations = false
  let notArray: {value: unknown} | undefined
  let elements = 0
  let afterComma = false
  const unexpected = (c: string) => new SyntaxError(`unexpected ${JSON.stringify(c)} ${elements > 0 ? `after conversation ${elements}` : 'before the first conversation'}`)

  for await (const chunk of chunks) {
    let i = 0
    while (i < chunk.length) {
      if (value) {
        if (!value.done) i = value.feed(chunk, i, false)
        if (!value.done) break
        const done = value
        value = undefined
        if (state === 'element') {
          elements++
          yield done.parse()
          state = 'element-comma-or-end'
        } else if (state === 'value') {
          const parsed = done.parse()
          if (key === 'conversations') {
            foundConversations = true
            notArray = {value: parsed}
          }
          state = 'comma-or-end'
        } else if (state === 'top-value') {
          throw new NotADocument(done.parse())
        }
        continue
      }
      if (keyText) {
        if (!keyText.done) i = keyText.feed(chunk, i, false)
        if (!keyText.done) break
        key = keyText.parse() as string
        keyText = undefined
        state = 'colon'
        continue
      }
      const c = chunk[i]!
      if (WHITESPACE.has(c)) {
        i++
        continue
      }
      switch (state) {
        case 'start':
          if (c === '[') {
            topArray = true
            foundConversations = true
            state = 'element-or-end'
            i++
          } else if (c === '{') {
            state = 'key-or-end'
            i++
          } else {
            state = 'top-value'
            value = new ValueText()
            i = value.feed(chunk, i, true)
          }
          break
        case 'key-or-end':
        case 'key':
          if (c === '}' && state === 'key-or-end') {
            state = 'end'
            i++
          } else if (c === '"') {
            keyText = new ValueText()
            i = keyText.feed(chunk, i, true)
          } else throw unexpected(c)
          break
        case 'colon':
          if (c !== ':') throw unexpected(c)
          state = 'value'
          i++
          break
        case 'value':
          if (key === 'conversations' && c === '[') {
            if (foundConversations) throw new SyntaxError('the document holds "conversations" twice')
            foundConversations = true
            state = 'element-or-end'
            i++
          } else {
            value = new ValueText()
            i = value.feed(chunk, i, true)
          }
          break
        case 'comma-or-end':
          if (c === ',') state = 'key'
          else if (c === '}') state = 'end'
          else throw unexpected(c)
          i++
          break
        case 'element-or-end':
        case 'element':
          if (c === ']' && !afterComma) {
            state = topArray ? 'end' : 'comma-or-end'
            i++
          } else {
            afterComma = false
            state = 'element'
            value = new ValueText()
            i = value.feed(chunk, i, true)
          }
          break
        case 'element-comma-or-end':
          if (c === ',') {
            state = 'element'
            afterComma = true
          } else if (c === ']') state = topArray ? 'end' : 'comma-or-end'
          else throw unexpected(c)
          i++
          break
        case 'end':
          throw unexpected(c)
        default:
          throw unexpected(c)
      }
    }
  }
  // A bare number or literal is only ended by the end of the input.
  if (value && state === 'top-value') throw new NotADocument(value.parse())
  if (value || keyText || state !== 'end') throw new SyntaxError('the document ends before it is complete')
  if (!foundConversations) throw new NotADocument({})
  if (notArray) throw new NotADocument({conversations: notArray.value})
}
