/** What a search of interface E asks and answers, the same on both stores. */

/** One search: each term as sent and as its FTS5 tokens, and the inclusive window of published_at. */
export interface SearchQuery {
  /** The terms as the caller sent them (trimmed); phrase queries are made from this text. */
  terms: readonly string[]
  /** Each term split as the index splits text (store/fts-tokens.ts, tokenizeTexts). */
  tokens: readonly (readonly string[])[]
  /** ISO 8601 UTC with milliseconds, as stored. */
  start: string
  end: string
}

export interface SummaryRow {
  t: number
  kind: 'post' | 'comment'
  docs: number
  matches: number
}

export interface MatchedPost {
  id: number
  /** Bit t is set when term t matched the post or one of its comments in the window. */
  mask: number
}
