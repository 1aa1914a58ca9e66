import {sql, type Kysely} from 'kysely'
import {contextOf} from '../../store/context.js'
import {isPostgres} from '../../store/dialect.js'
import {tokenizeTexts} from '../../store/fts-tokens.js'
import {inBatch} from '../../store/writer.js'

/*
 * Interface E's per-day term statistics. For every day, kind of document (post or comment) and
 * term of one or two tokens that occurs that day: how many documents of that kind and day contain
 * the term (docs) and how many times it occurs in them (matches, overlapping occurrences each
 * counted, never across two fields). A summary over whole days then adds up one row per day and
 * term instead of reading the search index's position lists. The rows change in the same
 * transaction as every write of a post or a comment (conversations/repository.ts); a store made
 * before them gets them from its migration; a test holds them to a full recount.
 *
 * This lives beside the store rather than in the interface because the migration that builds the
 * statistics for an existing store needs it, and the store layer never imports an interface.
 */

export const DAY_MS = 86_400_000
/** Terms of at most this many tokens are counted per day; longer phrases are searched in the index. */
export const MAX_COUNTED_TOKENS = 2

export type DocumentKind = 'post' | 'comment'
/** How a kind is stored in the table: a small integer keeps its rows short. */
export const KIND_CODE: Record<DocumentKind, number> = {post: 0, comment: 1}

const LAST_SECOND = 2 ** 32 - 1

/**
 * The day (since 1970-01-01, UTC) a document counts under: its publication second clamped to the
 * range the search key holds, so the day and the index agree on every document.
 */
function dayOf(publishedAt: string): number {
  const second = Math.floor(Date.parse(publishedAt) / 1000)
  return Math.floor(Math.min(Math.max(second, 0), LAST_SECOND) / 86_400)
}

/** How many times the phrase `tokens` occurs in one field's tokens, overlapping occurrences each counted. */
export function phraseOccurrences(field: readonly string[], tokens: readonly string[]): number {
  let count = 0
  for (let i = 0; i + tokens.length <= field.length; i++) {
    let j = 0
    while (j < tokens.length && field[i + j] === tokens[j]) j++
    if (j === tokens.length) count++
  }
  return count
}

/** A post (fields title and content) or a comment (content), split into tokens. */
export interface TokenizedDocument {
  kind: DocumentKind
  published_at: string
  fields: readonly (readonly string[])[]
}

/** One row's change: [kind, day, term, docs, matches]. */
type Change = [kind: number, day: number, term: string, docs: number, matches: number]

/** Rows per upsert statement on SQLite (prepared once, run as often as needed). */
const ROWS_PER_STATEMENT = 100
/** Rows per statement on PostgreSQL, where a statement takes each column as one array. */
const ROWS_PER_ARRAY_STATEMENT = 5_000
/** Days fit in 17 bits up to 2100 (the search key's range): kind and day share one number. */
const KIND_SHIFT = 2 ** 17
/** Distinct tokens numbered at once (between two writes) stay below this; pairs of them fit in 2^53. */
const PAIR_SHIFT = 2 ** 26

/**
 * Per-day term counts of many documents, added up in memory before they are written: the rows of
 * one term and day are then written once for a whole chunk of documents instead of once per
 * statement's worth, and in key order (term, kind, day) so each write lands beside the last.
 * Held as term → (kind, day) → counts, so sorting is done on the distinct terms (thousands), not
 * on the rows (millions). `size` is the rows held: a bulk writer flushes when it grows too large,
 * which bounds memory whatever the input's size.
 */
export class TermDayCounts {
  /**
   * Terms by number: a token is numbered on first sight (`tokens`), a pair of tokens is
   * (first + 1) × 2^26 + second. Counting then allocates no string per pair of tokens, which was
   * most of the cost of adding a document up.
   */
  private readonly tokens = new Map<string, number>()
  private readonly names: string[] = []
  private readonly terms = new Map<number, Map<number, [docs: number, matches: number, lastDocument: number]>>()
  private document = 0
  /** Distinct (term, kind, day) rows held. */
  size = 0

  /** Counts one document in: each term of one or two tokens, field by field (a phrase never spans two fields). */
  add(kind: DocumentKind, publishedAt: string, fields: readonly (readonly string[])[]): void {
    const document = ++this.document
    const slot = KIND_CODE[kind] * KIND_SHIFT + dayOf(publishedAt)
    const bump = (term: number) => {
      let days = this.terms.get(term)
      if (!days) {
        days = new Map()
        this.terms.set(term, days)
      }
      const counts = days.get(slot)
      if (!counts) {
        days.set(slot, [1, 1, document])
        this.size++
        return
      }
      counts[1] += 1
      if (counts[2] !== document) {
        counts[0] += 1
        counts[2] = document
      }
    }
    for (const field of fields) {
      let previous = -1
      for (const token of field) {
        let id = this.tokens.get(token)
        if (id === undefined) {
          id = this.names.length
          this.names.push(token)
          this.tokens.set(token, id)
        }
        bump(id)
        if (previous >= 0) bump((previous + 1) * PAIR_SHIFT + id)
        previous = id
      }
    }
  }

  /** A term's text from its number. */
  private name(term: number): string {
    return term < PAIR_SHIFT ? this.names[term]! : `${this.names[Math.floor(term / PAIR_SHIFT) - 1]} ${this.names[term % PAIR_SHIFT]}`
  }

  /** Calls `row` for each row held, in the table's key order, each count multiplied by `sign`; then forgets them. */
  private drain(sign: 1 | -1, row: (kind: number, day: number, term: string, docs: number, matches: number) => void): void {
    const named = [...this.terms.keys()].map((term): [string, number] => [this.name(term), term])
    named.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    for (const [text, term] of named) {
      const days = this.terms.get(term)!
      for (const slot of [...days.keys()].sort((a, b) => a - b)) {
        const counts = days.get(slot)!
        row(Math.floor(slot / KIND_SHIFT), slot % KIND_SHIFT, text, sign * counts[0], sign * counts[1])
      }
    }
    this.terms.clear()
    this.tokens.clear()
    this.names.length = 0
    this.size = 0
  }

  /** The rows held, in the table's key order, each count multiplied by `sign`; then forgets them. */
  take(sign: 1 | -1): Change[] {
    const rows: Change[] = []
    this.drain(sign, (kind, day, term, docs, matches) => rows.push([kind, day, term, docs, matches]))
    return rows
  }

  /**
   * Writes the rows held into the statistics (`sign` 1 for documents written, -1 for documents
   * deleted) and forgets them. Must run in the transaction that writes or deletes the documents.
   */
  // biome-ignore lint/suspicious/noExplicitAny: its migration runs it on the store's schema of that time, not today's Database
  async write(db: Kysely<any>, sign: 1 | -1): Promise<void> {
    if (this.size === 0) return
    // Inside a batch of the group writer on SQLite, the statements go straight to the connection
    // the batch holds, their parameters filled in place: building and compiling a query per
    // chunk cost more than SQLite's own work.
    const direct = sign > 0 && inBatch(db) ? contextOf(db)?.direct : undefined
    if (!direct) return writeChanges(db, this.take(sign), sign)
    const parameters: (string | number)[] = []
    this.drain(sign, (kind, day, term, docs, matches) => {
      parameters.push(kind, day, term, docs, matches)
      if (parameters.length === ROWS_PER_STATEMENT * 5) {
        direct(FULL_UPSERT, parameters)
        parameters.length = 0
      }
    })
    if (parameters.length > 0) direct(sqliteUpsert(parameters.length / 5), parameters)
  }
}

/**
 * Counts documents into the statistics (`sign` 1, when they are written) or out of them (-1, when
 * they are deleted). Must run in the transaction that writes or deletes the documents.
 */
// biome-ignore lint/suspicious/noExplicitAny: its migration runs it on the store's schema of that time, not today's Database
export async function countTermDays(db: Kysely<any>, documents: readonly TokenizedDocument[], sign: 1 | -1): Promise<void> {
  const counts = new TermDayCounts()
  for (const document of documents) counts.add(document.kind, document.published_at, document.fields)
  await counts.write(db, sign)
}

const UPSERT = 'on conflict (term, kind, day) do update set docs = conversation_term_days.docs + excluded.docs, matches = conversation_term_days.matches + excluded.matches'

/** SQLite's upsert of `rows` rows, prepared once per size and kept by the store's statement cache. */
function sqliteUpsert(rows: number): string {
  return `insert into conversation_term_days (kind, day, term, docs, matches) values ${Array(rows).fill('(?, ?, ?, ?, ?)').join(', ')} ${UPSERT}`
}
const FULL_UPSERT = sqliteUpsert(ROWS_PER_STATEMENT)

// biome-ignore lint/suspicious/noExplicitAny: see countTermDays
async function writeChanges(db: Kysely<any>, rows: readonly Change[], sign: 1 | -1): Promise<void> {
  if (isPostgres(db)) {
    for (let i = 0; i < rows.length; i += ROWS_PER_ARRAY_STATEMENT) {
      const chunk = rows.slice(i, i + ROWS_PER_ARRAY_STATEMENT)
      const column = (index: number) => chunk.map((row) => row[index])
      await sql`insert into conversation_term_days (kind, day, term, docs, matches)
        select * from unnest(${column(0)}::integer[], ${column(1)}::integer[], ${column(2)}::text[], ${column(3)}::integer[], ${column(4)}::integer[])
        ${sql.raw(UPSERT)}`.execute(db)
    }
  } else {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + ROWS_PER_STATEMENT)
      await sql`insert into conversation_term_days (kind, day, term, docs, matches) values ${sql.join(chunk.map((r) => sql`(${r[0]}, ${r[1]}, ${r[2]}, ${r[3]}, ${r[4]})`))} ${sql.raw(UPSERT)}`.execute(
        db,
      )
    }
  }
  if (sign > 0) return
  // A term no document of that day holds any more leaves no row behind.
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT * 2) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT * 2)
    await sql`delete from conversation_term_days where docs <= 0 and (term, kind, day) in (values ${sql.join(
      chunk.map((r) => sql`(${r[2]}, cast(${r[0]} as integer), cast(${r[1]} as integer))`),
    )})`.execute(db)
  }
}

/** A post (with its title) or a comment, as stored. */
export interface StoredDocument {
  kind: DocumentKind
  published_at: string
  /** Posts only. */
  title?: string
  content: string
}

/** Posts with their title and content, comments with their content, as the statistics take them. */
export async function tokenizeDocuments(documents: readonly StoredDocument[]): Promise<TokenizedDocument[]> {
  const texts = documents.flatMap((d) => (d.kind === 'post' ? [d.title ?? '', d.content] : [d.content]))
  const tokens = await tokenizeTexts(texts)
  let next = 0
  return documents.map((d) => ({kind: d.kind, published_at: d.published_at, fields: d.kind === 'post' ? [tokens[next++]!, tokens[next++]!] : [tokens[next++]!]}))
}

const PAGE = 2_000

/** Where each kind of document lives, with the columns the statistics read. */
const SOURCES = [
  {kind: 'post', table: 'conversation_posts', columns: 'id, published_at, title, content'},
  {kind: 'comment', table: 'conversation_comments', columns: 'id, published_at, content'},
] as const

/**
 * Counts every post and comment in the store into empty statistics: how a store made before them
 * gets them (its migration), and the full recount the tests compare against.
 */
// biome-ignore lint/suspicious/noExplicitAny: its migration runs it on the store's schema of that time, not today's Database
export async function countEveryDocument(db: Kysely<any>): Promise<void> {
  for (const source of SOURCES) {
    for (let after = -1; ; ) {
      const page = await sql<
        StoredDocument & {id: number}
      >`select ${sql.raw(source.columns)} from ${sql.table(source.table)} where id > ${after} order by id limit ${PAGE}`.execute(db)
      if (page.rows.length === 0) break
      await countTermDays(db, await tokenizeDocuments(page.rows.map((row) => ({...row, kind: source.kind}))), 1)
      after = Number(page.rows.at(-1)!.id)
    }
  }
}
