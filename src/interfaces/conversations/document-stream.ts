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
  const tokenizer = new Tokenizer({stringBufferSize: STRING_BUFFER})
  let parser: TokenParser | undefined
  /** Set when the document is neither an object nor an array: its value, once complete. */
  let topLevel: {value: unknown} | undefined
  /** Elements the chunk being read completed, handed on once it is read. */
  let ready: unknown[] = []
  let parsed = 0
  let foundConversations = false
  /** The last `conversations` value that was not an array (an object's members as they come). */
  let notArray: {value: unknown} | undefined
  let twice = false
  const where = () => (parsed > 0 ? `after conversation ${parsed}` : 'before the first conversation')

  // `$.conversations.*` cannot tell a `conversations` array from an object or from no such key,
  // so the top-level object's own tokens are watched too: the value after a key's colon.
  let watching = false
  let depth = 0
  let lastString: unknown
  let key: unknown
  let afterColon = false
  const watch = ({token, value}: ParsedTokenInfo) => {
    if (depth === 1) {
      if (afterColon && key === 'conversations') {
        if (token === TokenType.LEFT_BRACKET) {
          twice = foundConversations
          notArray = undefined
        } else notArray = {value: token === TokenType.LEFT_BRACE ? {} : value}
        foundConversations = true
      }
      afterColon = token === TokenType.COLON
      if (afterColon) key = lastString
      else if (token === TokenType.STRING) lastString = value
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) depth++
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth--
  }

  const onValue = ({value, key}: ParsedElementInfo) => {
    if (topLevel) topLevel.value = value
    else if (typeof key === 'number') {
      parsed++
      ready.push(value)
    }
    // A member of a `conversations` object: kept only to say what stood there.
    else if (notArray) (notArray.value as Record<string, unknown>)[key as string] = value
  }

  tokenizer.onToken = (info) => {
    if (!parser) {
      const paths = pathsFor(info.token)
      parser = new TokenParser({paths, keepStack: false})
      parser.onValue = onValue
      // The document is one value: once it is complete, only whitespace may follow.
      parser.onEnd = () => {
        if (!tokenizer.isEnded) tokenizer.end()
      }
      if (paths[0] === '$') topLevel = {value: undefined}
      foundConversations = info.token === TokenType.LEFT_BRACKET
      watching = info.token === TokenType.LEFT_BRACE
    }
    try {
      parser.write(info)
    } catch {
      // A token out of place (the library's message names its internal states instead).
      throw new SyntaxError(`unexpected ${spelling(info)} at byte ${info.offset}, ${where()}`)
    }
    if (watching) watch(info)
  }

  let first = true
  for await (const chunk of chunks) {
    // JSON.parse refuses a byte order mark, and so did every import before: the library skips one.
    if (first && chunk.length > 0) {
      first = false
      if (chunk.charCodeAt(0) === 0xfeff) throw new SyntaxError('the document starts with a byte order mark (U+FEFF), which JSON does not allow')
    }
    try {
      tokenizer.write(chunk)
    } catch (error) {
      throw notJson(error, where())
    }
    if (twice) throw new SyntaxError('the document holds "conversations" twice')
    const batch = ready
    ready = []
    yield* batch
  }
  try {
    if (!tokenizer.isEnded) tokenizer.end()
    if (parser && !parser.isEnded) parser.end()
  } catch {
    throw new SyntaxError('the document ends before it is complete')
  }
  if (!parser) throw new SyntaxError('the document ends before it is complete')
  yield* ready
  if (topLevel) throw new NotADocument(topLevel.value)
  if (!foundConversations) throw new NotADocument({})
  if (notArray) throw new NotADocument({conversations: notArray.value})
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
