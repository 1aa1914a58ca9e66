import {Kysely, SqliteDialect, sql} from 'kysely'
import type {Db} from '../../store/database.js'
import {openSqlite} from '../../store/db.js'
import {isPostgres} from '../../store/dialect.js'

/*
 * Tokens exactly as SQLite's FTS5 (unicode61, diacritics kept) makes them, for a store that is not
 * SQLite. PostgreSQL's own text-search parser splits text differently (numbers with dots, e-mail
 * addresses, hyphenated words), so a PostgreSQL store asks an in-memory SQLite instead: every
 * document and every query term is split by the very tokenizer the SQLite store indexes with, and
 * the two stores count the same occurrences.
 */

/** The FTS5 tokenizer of both indexes; query terms are split by the very same tokenizer. */
export const TOKENIZER = 'unicode61 remove_diacritics 0'

/**
 * Splits each term into the tokens FTS5 itself would index it as, by writing the terms into a
 * scratch FTS5 table on this connection and reading its token positions back. Doing it in SQLite
 * rather than in JavaScript means a term can never be split or case-folded differently from the
 * documents it is compared with. Must run while the caller holds the connection (a transaction).
 */
async function ftsTokens<DB>(trx: Kysely<DB>, terms: readonly string[]): Promise<string[][]> {
  await sql.raw(`create virtual table if not exists temp.conversation_query_text using fts5(term, tokenize='${TOKENIZER}')`).execute(trx)
  await sql.raw(`create virtual table if not exists temp.conversation_query_tokens using fts5vocab(temp, conversation_query_text, instance)`).execute(trx)
  await sql`delete from temp.conversation_query_text`.execute(trx)
  for (const [index, term] of terms.entries()) {
    await sql`insert into temp.conversation_query_text(rowid, term) values (${index}, ${term})`.execute(trx)
  }
  const rows = await sql<{term: string; doc: number; offset: number}>`select term, doc, "offset" from temp.conversation_query_tokens`.execute(trx)
  await sql`delete from temp.conversation_query_text`.execute(trx)
  const tokens: string[][] = terms.map(() => [])
  for (const row of [...rows.rows].sort((a, b) => a.doc - b.doc || a.offset - b.offset)) tokens[row.doc]![row.offset] = row.term
  return tokens
}

/**
 * Query terms split into the tokens the store's index holds: by the store's own FTS5 tokenizer on
 * SQLite (on the caller's connection), by the same tokenizer in an in-memory SQLite elsewhere.
 */
export function tokenizeTerms(db: Db, terms: readonly string[]): Promise<string[][]> {
  return isPostgres(db) ? tokenizeTexts(terms) : ftsTokens(db, terms)
}

let instance: Promise<Kysely<unknown>> | undefined

const BATCH = 200

/** Each text's tokens, in order. */
export async function tokenizeTexts(texts: readonly string[]): Promise<string[][]> {
  if (texts.length === 0) return []
  instance ??= openSqlite(':memory:').then((handle) => new Kysely<unknown>({dialect: new SqliteDialect({database: handle})}))
  const db = await instance
  const out: string[][] = []
  // One connection, held for each batch: the scratch tables belong to it.
  for (let i = 0; i < texts.length; i += BATCH) {
    const batch = texts.slice(i, i + BATCH)
    out.push(...(await db.connection().execute((conn) => ftsTokens(conn, batch))))
  }
  return out
}
