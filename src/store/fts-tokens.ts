import {Kysely, SqliteDialect, sql} from 'kysely'
import {openSqlite} from './sqlite/open.js'

/*
 * Tokens exactly as SQLite's FTS5 makes them for interface E's indexes. Everything that compares
 * words with the index (query terms, PostgreSQL's token columns, the per-day term statistics)
 * splits text here, so nothing can split or case-fold a word differently from the index.
 */

/** The FTS5 tokenizer of both search indexes (see the conversations migration). */
const FTS_TOKENIZER = 'unicode61 remove_diacritics 0'

/**
 * Splits each text into the tokens FTS5 itself would index it as, by writing the texts into a
 * scratch FTS5 table on this connection and reading its token positions back. Must run while the
 * caller holds the connection (a transaction, or a connection of its own).
 */
async function ftsTokens<DB>(trx: Kysely<DB>, texts: readonly string[]): Promise<string[][]> {
  await sql.raw(`create virtual table if not exists temp.conversation_query_text using fts5(term, tokenize='${FTS_TOKENIZER}')`).execute(trx)
  await sql.raw(`create virtual table if not exists temp.conversation_query_tokens using fts5vocab(temp, conversation_query_text, instance)`).execute(trx)
  await sql`delete from temp.conversation_query_text`.execute(trx)
  for (const [index, text] of texts.entries()) {
    await sql`insert into temp.conversation_query_text(rowid, term) values (${index}, ${text})`.execute(trx)
  }
  const rows = await sql<{term: string; doc: number; offset: number}>`select term, doc, "offset" from temp.conversation_query_tokens`.execute(trx)
  await sql`delete from temp.conversation_query_text`.execute(trx)
  const tokens: string[][] = texts.map(() => [])
  for (const row of [...rows.rows].sort((a, b) => a.doc - b.doc || a.offset - b.offset)) tokens[row.doc]![row.offset] = row.term
  return tokens
}

/**
 * unicode61 on ASCII text: a token is a run of ASCII letters and digits, folded to lower case;
 * every other ASCII character separates. (Its tables for characters past ASCII are large; text
 * holding any goes to FTS5 itself.) A property test holds this to FTS5's own answer.
 */
export function asciiTokens(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? []
}

const BEYOND_ASCII = /[\u0080-\uffff]/

let scratch: Promise<Kysely<unknown>> | undefined
const BATCH = 200

/**
 * Each text's tokens, in order: plain ASCII split at once in JavaScript, anything else by FTS5 in
 * an in-memory SQLite of this process.
 */
export async function tokenizeTexts(texts: readonly string[]): Promise<string[][]> {
  const out: string[][] = new Array(texts.length)
  const rest: number[] = []
  for (const [index, text] of texts.entries()) {
    if (BEYOND_ASCII.test(text)) rest.push(index)
    else out[index] = asciiTokens(text)
  }
  if (rest.length === 0) return out
  const split = await sqliteTokens(rest.map((index) => texts[index]!))
  for (const [i, index] of rest.entries()) out[index] = split[i]!
  return out
}

/** Each text's tokens by FTS5 itself, in an in-memory SQLite of this process. */
export async function sqliteTokens(texts: readonly string[]): Promise<string[][]> {
  if (texts.length === 0) return []
  scratch ??= openSqlite(':memory:').then((handle) => new Kysely<unknown>({dialect: new SqliteDialect({database: handle})}))
  const db = await scratch
  const out: string[][] = []
  // One connection, held for each batch: the scratch tables belong to it.
  for (let i = 0; i < texts.length; i += BATCH) {
    const batch = texts.slice(i, i + BATCH)
    out.push(...(await db.connection().execute((conn) => ftsTokens(conn, batch))))
  }
  return out
}
