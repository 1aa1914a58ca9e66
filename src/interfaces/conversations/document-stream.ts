import {type ParsedElementInfo, type ParsedTokenInfo, TokenizerError, TokenParser, Tokenizer, TokenType} from '@streamparser/json'

/*
 * A data-call document read as a stream: the elements of its `conversations` array (or of the
 * document itself when it is a bare array) one at a time, so importing an archive holds the
 * conversations of one chunk of text instead of the whole document's. The JSON is read by
 * @streamparser/json (its tokenizer and token parser), which checks the syntax and builds each
 * element; everything else (the other keys' values, elements already handed on) is dropped as soon
 * as it is complete (`keepStack: false`).
 */

/**
 * Strings are gathered in a byte buffer of this size rather than a character at a time: about an
 * eighth less CPU in reading a generated 22 MB archive (the size the library's README
 * suggests).
 */
const STRING_BUFFER = 64 * 1024

/** The document's shape when it holds no conversations array to stream. */
export class NotADocument extends Error {
  constructor(readonly value: unknown) {
    super('not a data-call document')
  }
}

/**
 * What the token parser is asked for, chosen by the document's first token: a bare array's
 * elements; an object's `conversations` members (an array's elements, or an object's keys, which
 * is then refused); any other value whole, to say what it is.
 */
function pathsFor(first: TokenType): string[] {
  if (first === TokenType.LEFT_BRACKET) return ['$.*']
  if (first === TokenType.LEFT_BRACE) return ['$.conversations.*']
  return ['$']
}

const PUNCTUATION: Partial<Record<TokenType, string>> = {
  [TokenType.LEFT_BRACE]: '{',
  [TokenType.RIGHT_BRACE]: '}',
  [TokenType.LEFT_BRACKET]: '[',
  [TokenType.RIGHT_BRACKET]: ']',
  [TokenType.COLON]: ':',
  [TokenType.COMMA]: ',',
}

/** A token as the document spells it (a long string cut short), for an error message. */
function spelling({token, value}: ParsedTokenInfo): string {
  const text = PUNCTUATION[token] ?? (token === TokenType.STRING ? JSON.stringify(value) : String(value))
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)
}

/**
 * Reads a document from text chunks and yields each conversation's parsed value. A document that
 * is valid JSON but has no `conversations` array (or is not an object or array) ends with a
 * NotADocument carrying what stood there (the top-level value, or `{conversations: …}`) so the
 * caller can say what is wrong in the schema's words; anything that is not JSON throws a
 * SyntaxError.
 */
export async function* documentConversations(chunks: AsyncIterable<string>): AsyncGenerator<unknown, void, undefined> {
  const reader = new DocumentReader()
  let first = true
  for await (const chunk of chunks) {
    // JSON.parse refuses a byte order mark, and so did every import before: the library skips one.
    if (first && chunk.length > 0) {
      first = false
      if (chunk.charCodeAt(0) === 0xfeff) throw new SyntaxError('the document starts with a byte order mark (U+FEFF), which JSON does not allow')
    }
    reader.write(chunk)
    yield* reader.take()
  }
  reader.end()
  yield* reader.take()
  reader.check()
}

/**
 * One document being read: the tokenizer, the token parser made for the document's first token,
 * the elements ready to hand on, and what the top-level object's own tokens said about
 * `conversations` (see ConversationsWatch).
 */
class DocumentReader {
  private readonly tokenizer = new Tokenizer({stringBufferSize: STRING_BUFFER})
  private parser: TokenParser | undefined
  /** Set when the document is neither an object nor an array: its value, once complete. */
  private topLevel: {value: unknown} | undefined
  /** Set when the document is an object: its own tokens are watched. */
  private watch: ConversationsWatch | undefined
  /** Elements the chunk being read completed, handed on once it is read. */
  private ready: unknown[] = []
  private parsed = 0

  constructor() {
    this.tokenizer.onToken = (info) => this.token(info)
  }

  /** Where the reading is, for an error message. */
  private where(): string {
    return this.parsed > 0 ? `after conversation ${this.parsed}` : 'before the first conversation'
  }

  write(chunk: string): void {
    try {
      this.tokenizer.write(chunk)
    } catch (error) {
      throw notJson(error, this.where())
    }
    if (this.watch?.twice) throw new SyntaxError('the document holds "conversations" twice')
  }

  /** The elements completed since the last call. */
  take(): unknown[] {
    const batch = this.ready
    this.ready = []
    return batch
  }

  /** The input is over: the document must be complete. */
  end(): void {
    try {
      if (!this.tokenizer.isEnded) this.tokenizer.end()
      if (this.parser && !this.parser.isEnded) this.parser.end()
    } catch {
      throw new SyntaxError('the document ends before it is complete')
    }
    if (!this.parser) throw new SyntaxError('the document ends before it is complete')
  }

  /** A complete document without a `conversations` array: what stood there instead. */
  check(): void {
    if (this.topLevel) throw new NotADocument(this.topLevel.value)
    if (this.watch && !this.watch.found) throw new NotADocument({})
    if (this.watch?.notArray) throw new NotADocument({conversations: this.watch.notArray.value})
  }

  private token(info: ParsedTokenInfo): void {
    const parser = this.parser ?? this.start(info.token)
    try {
      parser.write(info)
    } catch {
      // A token out of place (the library's message names its internal states instead).
      throw new SyntaxError(`unexpected ${spelling(info)} at byte ${info.offset}, ${this.where()}`)
    }
    this.watch?.token(info)
  }

  /** The token parser for a document that starts with `first`. */
  private start(first: TokenType): TokenParser {
    const paths = pathsFor(first)
    const parser = new TokenParser({paths, keepStack: false})
    parser.onValue = (info) => this.value(info)
    // The document is one value: once it is complete, only whitespace may follow.
    parser.onEnd = () => {
      if (!this.tokenizer.isEnded) this.tokenizer.end()
    }
    if (paths[0] === '$') this.topLevel = {value: undefined}
    if (first === TokenType.LEFT_BRACE) this.watch = new ConversationsWatch()
    this.parser = parser
    return parser
  }

  private value({value, key}: ParsedElementInfo): void {
    if (this.topLevel) this.topLevel.value = value
    else if (typeof key === 'number') {
      this.parsed++
      this.ready.push(value)
    }
    // A member of a `conversations` object: kept only to say what stood there.
    else if (this.watch?.notArray) (this.watch.notArray.value as Record<string, unknown>)[key as string] = value
  }
}

/**
 * `$.conversations.*` cannot tell a `conversations` array from an object or from no such key, so
 * the top-level object's own tokens are watched too: the value after a key's colon.
 */
class ConversationsWatch {
  /** A `conversations` member was met. */
  found = false
  /** A second `conversations` array was met. */
  twice = false
  /** The last `conversations` value that was not an array (an object's members as they come). */
  notArray: {value: unknown} | undefined
  private depth = 0
  private lastString: unknown
  private key: unknown
  private afterColon = false

  token({token, value}: ParsedTokenInfo): void {
    if (this.depth === 1) this.member(token, value)
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) this.depth++
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) this.depth--
  }

  /** A token of the top-level object itself. */
  private member(token: TokenType, value: unknown): void {
    if (this.afterColon && this.key === 'conversations') {
      if (token === TokenType.LEFT_BRACKET) {
        this.twice = this.found
        this.notArray = undefined
      } else this.notArray = {value: token === TokenType.LEFT_BRACE ? {} : value}
      this.found = true
    }
    this.afterColon = token === TokenType.COLON
    if (this.afterColon) this.key = this.lastString
    else if (token === TokenType.STRING) this.lastString = value
  }
}

/**
 * An error met while reading, as a SyntaxError. The tokenizer's message names the character and
 * its position in the chunk and the stream, and its internal state: only the character and the
 * stream's position are kept.
 */
function notJson(error: unknown, where: string): unknown {
  if (error instanceof SyntaxError || !(error instanceof Error)) return error
  const character = error instanceof TokenizerError ? /^Unexpected "(.*)" at chunk position "\d+" \(absolute position "(\d+)"\)/s.exec(error.message) : null
  return new SyntaxError(character ? `unexpected ${JSON.stringify(character[1])} at byte ${character[2]}, ${where}` : `${error.message}, ${where}`)
}
