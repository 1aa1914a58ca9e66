import type {Db} from '../../store/database.js'
import {isPostgres} from '../../store/dialect.js'
import {ftsTokens, tokenizeTexts} from '../../store/fts-tokens.js'

/*
 * PostgreSQL's own text-search parser splits text differently from FTS5 (numbers with dots,
 * e-mail addresses, hyphenated words), so on PostgreSQL every document and every query term is
 * split by the very tokenizer the SQLite store indexes with (store/fts-tokens.ts), and the two
 * stores count the same occurrences.
 */

/**
 * Query terms split into the tokens the store's index holds: by the store's own FTS5 tokenizer on
 * SQLite (on the caller's connection), by the same tokenizer in an in-memory SQLite elsewhere.
 */
export function tokenizeTerms(db: Db, terms: readonly string[]): Promise<string[][]> {
  return isPostgres(db) ? tokenizeTexts(terms) : ftsTokens(db, terms)
}
