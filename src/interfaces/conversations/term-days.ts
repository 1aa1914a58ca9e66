import {sql, type Kysely} from 'kysely'
import {tokenizeTexts} from '../../store/fts-tokens.js'

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

/** Occurrences of every one- and two-token term of a document, field by field (a phrase never spans two fields). */
function documentTerms(fields: readonly (readonly string[])[]): Map<string, number> {
  const counts = new Map<string, number>()
  const bump = (term: string) => counts.set(term, (counts.get(term) ?? 0) + 1)
  for (const tokens of fields) {
    for (let i = 0; i < tokens.length; i++) {
      bump(tokens[i]!)
      if (i + 1 < tokens.length) bump(`${tokens[i]} ${tokens[i + 1]}`)
    }
  }
  return counts
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

type Change = [kind: number, day: number, term: string, docs: number, matches: number]

const ROWS_PER_STATEMENT = 200

/**
 * Counts documents into the statistics (`sign` 1, when they are written) or out of them (-1, when
 * they are deleted). Must run in the transaction that writes or deletes the documents.
 */
// biome-ignore lint/suspicious/noExplicitAny: its migration runs it on the store's schema of that time, not today's Database
export async function countTermDays(db: Kysely<any>, documents: readonly TokenizedDocument[], sign: 1 | -1): Promise<void> {
  const changes = new Map<string, Change>()
  for (const document of documents) {
    const kind = KIND_CODE[document.kind]
    const day = dayOf(document.published_at)
    for (const [term, occurrences] of documentTerms(document.fields)) {
      const key = `${kind}|${day}|${term}`
      const change = changes.get(key)
      if (change) {
        change[3] += sign
        change[4] += sign * occurrences
      } else changes.set(key, [kind, day, term, sign, sign * occurrences])
    }
  }
  // In key order: each statement then touches neighbouring pages of the table instead of pages
  // all over it, which is most of the cost of keeping the statistics.
  const rows = [...changes.values()].filter((row) => row[3] !== 0 || row[4] !== 0).sort((a, b) => (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : a[0] - b[0] || a[1] - b[1]))
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT)
    await sql`insert into conversation_term_days (kind, day, term, docs, matches) values ${sql.join(chunk.map((r) => sql`(${r[0]}, ${r[1]}, ${r[2]}, ${r[3]}, ${r[4]})`))}
      on conflict (term, kind, day) do update set docs = conversation_term_days.docs + excluded.docs, matches = conversation_term_days.matches + excluded.matches`.execute(db)
    // A term no document of that day holds any more leaves no row behind.
    if (sign < 0) {
      await sql`delete from conversation_term_days where docs <= 0 and (term, kind, day) in (values ${sql.join(
        chunk.map((r) => sql`(${r[2]}, cast(${r[0]} as integer), cast(${r[1]} as integer))`),
      )})`.execute(db)
    }
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
