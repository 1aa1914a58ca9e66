import {sql, type RawBuilder} from 'kysely'
import type {ConversationsDb as Db} from './tables.js'
import type {MatchedPost, SearchQuery, SummaryRow} from './search-types.js'
import {dateLexemes, splitWindow, type WindowEdge} from './window.js'

/*
 * Interface E's search on PostgreSQL (the SQLite counterpart is the FTS5 SQL in repository.ts).
 * Same answers from the same tokens: a document matches a term when the term's tokens occur in
 * one of its fields in order; occurrences are counted from the field's stored token list
 * (overlapping ones each count). The GIN-indexed tsvector holds each document's tokens, its pairs
 * of adjacent tokens and the dates it was published on (the 2026113001 migration): it finds the
 * documents holding a token or a two-token phrase exactly, narrows the candidates of a longer
 * phrase, and takes the window's whole days in the same scan. The edges that make the window
 * exact are published_at ranges, added or taken away (window.ts, splitWindow).
 */

const KINDS = {
  post: {table: sql.table('conversation_posts'), fields: ['title_tokens', 'content_tokens']},
  comment: {table: sql.table('conversation_comments'), fields: ['content_tokens']},
} as const
type Kind = keyof typeof KINDS

/** One lexeme, given literally (no parser), as a tsquery operand. */
function lexeme(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
}

/**
 * The lexemes every document holding a term holds, as a tsquery, and whether holding them is
 * holding the term (see the 2026113001 migration): a token is its own lexeme, and a phrase's
 * adjacent tokens are a pair lexeme each. One or two tokens are thus exact; a longer phrase needs
 * its tokens in that order too. A term is at most 200 characters, and a token's characters fold
 * one to one, so a pair never passes the 2,047 bytes a lexeme may hold (a test holds the limits
 * to that).
 */
export function termLexemes(tokens: readonly string[]): {query: string; exact: boolean} {
  if (tokens.length === 1) return {query: lexeme(tokens[0]!), exact: true}
  const pairs = tokens.slice(1).map((token, i) => `${tokens[i]} ${token}`)
  return {query: pairs.map(lexeme).join(' & '), exact: tokens.length === 2}
}

/**
 * Part of a window, counted with its sign: whole UTC days, as a tsquery over their date lexemes,
 * or a stretch of published_at (an edge, see splitWindow).
 */
type WindowPart = {dates: string; sign: 1} | WindowEdge

/**
 * The window as the date lexemes of its whole days and the edges that make it exact: the days'
 * documents, plus or less those of each edge. Only edges, which are short, read published_at's
 * index: given the window's range as well, PostgreSQL would AND a bitmap of every document in
 * it with the terms', which is what the date lexemes are there to spare.
 */
function windowParts(start: string, end: string): WindowPart[] {
  const split = splitWindow(start, end)
  if (!split.days) return split.edges
  return [{dates: dateLexemes(split.days.first, split.days.last), sign: 1}, ...split.edges]
}

/** Documents in one part of the window holding the lexemes of `query`: for whole days, in one GIN scan. */
function candidates(query: string, part: WindowPart): RawBuilder<boolean> {
  if ('dates' in part) return sql<boolean>`d.search_terms @@ ${`(${query}) & (${part.dates})`}::tsquery`
  return sql<boolean>`d.published_at between ${part.start} and ${part.end} and d.search_terms @@ ${query}::tsquery`
}

/** Occurrences of a phrase in a document of `kind`: the sum over its fields. */
function occurrences(kind: Kind, tokens: readonly string[]): RawBuilder<number> {
  const phrase = sql`${[...tokens]}::text[]`
  return sql<number>`(${sql.join(
    KINDS[kind].fields.map((field) => sql`conversation_phrase_count(d.${sql.ref(field)}, ${phrase})`),
    sql` + `,
  )})`
}

/** Where a summary's parts come from (repository.ts, summaryShape): the same split as on SQLite. */
export interface PostgresSummaryShape {
  counted: readonly number[]
  days?: {first: number; last: number}
  edges: readonly {start: string; end: string; sign: 1 | -1}[]
}

/**
 * One term's documents and occurrences among the documents of `kind` published in [start, end],
 * multiplied by `sign` (an edge taken away from a whole day counts negative): a row per part of
 * the window, added up with the rest. Occurrences are counted from the tokens, so a candidate
 * that holds the term's lexemes but not the term counts nothing.
 */
function termCounts(kind: Kind, t: number, tokens: readonly string[], start: string, end: string, sign: 1 | -1): RawBuilder<SummaryRow>[] {
  const {query} = termLexemes(tokens)
  return windowParts(start, end).map(
    (part) => sql<SummaryRow>`select ${t}::integer as t, ${kind}::text as kind,
      ${sign * part.sign}::bigint * count(*) filter (where n > 0) as docs, ${sign * part.sign}::bigint * coalesce(sum(n), 0)::bigint as matches from (
        select ${occurrences(kind, tokens)} as n from ${KINDS[kind].table} as d where ${candidates(query, part)}
      ) as hits`,
  )
}

/**
 * A document holds the term: its lexemes say so exactly for a token or two (termLexemes); a
 * longer phrase needs its tokens in order in one field as well. Whether it occurs at all is a
 * substring search in the field's tokens joined by spaces: a token never holds a space (the
 * tokenizer splits text at whitespace), so " a b c " occurs there exactly when the phrase a b c
 * does, and PostgreSQL finds it several times faster than it counts occurrences with
 * conversation_phrase_count.
 */
function holds(kind: Kind, tokens: readonly string[]): RawBuilder<boolean> {
  const {query, exact} = termLexemes(tokens)
  const all = sql`d.search_terms @@ ${query}::tsquery`
  if (exact) return sql<boolean>`${all}`
  const needle = ` ${tokens.join(' ')} `
  const inField = (field: string) => sql`strpos(' ' || array_to_string(d.${sql.ref(field)}, ' ') || ' ', ${needle}) > 0`
  return sql<boolean>`(${all} and (${sql.join(KINDS[kind].fields.map(inField), sql` or `)}))`
}

/**
 * The documents of `kind` in one part of the window holding any of the terms. The terms' lexemes
 * go into one tsquery with the part's dates, so GIN finds the candidates in one scan; when every
 * term is exact in its lexemes (no phrase of three tokens or more), the index finds exactly those
 * documents, and nothing else is checked against the rows.
 */
function anyTerm(kind: Kind, terms: readonly (readonly string[])[], part: WindowPart): RawBuilder<boolean> {
  const lexemes = terms.map(termLexemes)
  const query = lexemes.map((term) => `(${term.query})`).join(' | ')
  if (lexemes.every((term) => term.exact)) return candidates(query, part)
  return sql<boolean>`${candidates(query, part)} and (${sql.join(
    terms.map((tokens) => holds(kind, tokens)),
    sql` or `,
  )})`
}

/**
 * Runs `run` on a second connection that reads `snapshot` (exported by the first connection's
 * transaction), beside the first: a summary's comments are counted there while its posts are
 * counted on the first connection (PostgresSearcher.summary offers one when the pool has a
 * connection to spare).
 */
export type Alongside = <R>(snapshot: string, run: (db: Db) => Promise<R>) => Promise<R>

/**
 * No parallel workers for a search's statements (in the caller's transaction; outside one this
 * changes nothing): its parts are small index reads, and starting workers for them took several
 * times as long as the reads, more so with many summaries at once on a few cores.
 */
export const NO_PARALLEL_WORKERS = "set_config('max_parallel_workers_per_gather', '0', true)"

/** The parts of a summary, unioned into one statement on `db`. */
async function countParts(db: Db, parts: readonly RawBuilder<unknown>[]): Promise<SummaryRow[]> {
  const result = await sql<SummaryRow>`${sql.join(
    parts.map((part) => sql`(${part})`),
    sql` union all `,
  )}`.execute(db)
  return result.rows
}

/**
 * Interface E's summary on PostgreSQL, as rows to add up per (t, kind). Split as on SQLite
 * (window.ts, splitWindow): terms of one or two tokens come from the per-day statistics over
 * the window's whole days, corrected by exact counts over its ragged edges; longer phrases and
 * the uniques (documents holding any term) are counted from the documents over the exact window.
 * All of it is one statement: one snapshot however the caller runs it, and one round trip. Given
 * `alongside` (a second connection on the same snapshot), the comments' documents are counted
 * there in a statement of their own while the rest runs here: the two largest reads of a summary
 * (each kind's uniques) then run at once, and the answer is the same. `alongside` needs `db` to
 * be a REPEATABLE READ transaction: the snapshot it exports lives as long as that transaction.
 */
export async function summaryCountsPostgres(db: Db, query: SearchQuery, shape: PostgresSummaryShape, alongside?: Alongside): Promise<SummaryRow[]> {
  const counted = new Set(shape.counted)
  const kinds = Object.keys(KINDS) as Kind[]
  // Each part reads the documents of one kind, but the per-day statistics', which go with the posts.
  const byKind: Record<Kind, RawBuilder<unknown>[]> = {post: [], comment: []}
  const parts = {push: (kind: Kind, ...more: RawBuilder<unknown>[]) => byKind[kind].push(...more)}
  for (const [t, tokens] of query.tokens.entries()) {
    if (counted.has(t)) continue
    for (const kind of kinds) parts.push(kind, ...termCounts(kind, t, tokens, query.start, query.end, 1))
  }
  if (shape.days && counted.size > 0) {
    // Terms as the statistics key them (tokens joined by a space), each under its own t: two
    // terms may share their tokens ("Pain" and "pain").
    const terms = sql.join(shape.counted.map((t) => sql`(${t}::integer, ${query.tokens[t]!.join(' ')}::text)`))
    parts.push(
      'post',
      sql`select v.t as t, case s.kind when 0 then 'post' else 'comment' end as kind,
        sum(s.docs)::bigint as docs, sum(s.matches)::bigint as matches
      from (values ${terms}) as v(t, term)
      join conversation_term_days as s on s.term = v.term and s.kind in (0, 1) and s.day between ${shape.days.first}::integer and ${shape.days.last}::integer
      group by v.t, s.kind`,
    )
  }
  for (const edge of shape.edges) {
    for (const t of shape.counted) {
      for (const kind of kinds) parts.push(kind, ...termCounts(kind, t, query.tokens[t]!, edge.start, edge.end, edge.sign))
    }
  }
  const window = windowParts(query.start, query.end)
  for (const kind of kinds) {
    for (const part of window) {
      parts.push(
        kind,
        sql`select -1 as t, ${kind}::text as kind, ${part.sign}::bigint * count(*) as docs, 0::bigint as matches from ${KINDS[kind].table} as d
        where ${anyTerm(kind, query.tokens, part)}`,
      )
    }
  }
  const split = alongside !== undefined && byKind.post.length > 0 && byKind.comment.length > 0
  // The second connection reads this transaction's snapshot, exported in the same round trip.
  const exported = split ? sql`, pg_export_snapshot() as snapshot` : sql``
  const setup = await sql<{snapshot?: string}>`select ${sql.raw(NO_PARALLEL_WORKERS)}${exported}`.execute(db)
  let rows: SummaryRow[]
  if (split) {
    const snapshot = setup.rows[0]?.snapshot ?? ''
    // Both statements run to their end, whichever fails first, so no connection outlives the call.
    const [posts, comments] = await Promise.allSettled([countParts(db, byKind.post), alongside(snapshot, (other) => countParts(other, byKind.comment))])
    if (posts.status === 'rejected') throw posts.reason
    if (comments.status === 'rejected') throw comments.reason
    rows = [...posts.value, ...comments.value]
  } else {
    rows = await countParts(db, [...byKind.post, ...byKind.comment])
  }
  return rows.map((row) => ({t: Number(row.t), kind: row.kind, docs: Number(row.docs), matches: Number(row.matches)}))
}

export async function matchedPostsPostgres(db: Db, query: SearchQuery, limit: number): Promise<MatchedPost[]> {
  // A set, not a count: the days' documents less those of the edges taken away, and those of the edges added.
  const window = windowParts(query.start, query.end)
  const outside = sql.join(
    window.flatMap((part) => ('dates' in part || part.sign > 0 ? [] : [sql`d.published_at between ${part.start} and ${part.end}`])),
    sql` or `,
  )
  const within = (kind: Kind, tokens: readonly string[], part: WindowPart) =>
    'dates' in part && window.some((other) => other.sign < 0) ? sql`${anyTerm(kind, [tokens], part)} and not (${outside})` : anyTerm(kind, [tokens], part)
  const hits = query.tokens.flatMap((tokens, t) =>
    window
      .filter((part) => part.sign > 0)
      .flatMap((part) => [
        sql`select ${1 << t}::integer as bit, d.id as post_id from conversation_posts as d where ${within('post', tokens, part)}`,
        sql`select ${1 << t}::integer as bit, d.post_id as post_id from conversation_comments as d where ${within('comment', tokens, part)}`,
      ]),
  )
  const result = await sql<MatchedPost>`
    select p.id as id, m.mask as mask from (
      select post_id, bit_or(bit) as mask from (${sql.join(hits, sql` union all `)}) as h group by post_id
    ) as m join conversation_posts p on p.id = m.post_id
    order by p.published_at, p.id limit ${limit}`.execute(db)
  return result.rows.map((row) => ({id: Number(row.id), mask: Number(row.mask)}))
}
