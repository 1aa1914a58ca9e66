import {sql, type RawBuilder} from 'kysely'
import type {Db} from '../../store/database.js'
import type {MatchedPost, SearchQuery, SummaryRow} from './search-types.js'

/*
 * Interface E's search on PostgreSQL (the SQLite counterpart is the FTS5 SQL in repository.ts).
 * Same answers from the same tokens: a document matches a term when the term's tokens occur in
 * one of its fields in order; occurrences are counted from the field's stored token list
 * (overlapping ones each count); the GIN-indexed tsvector only narrows the candidates to
 * documents holding every token of a term. The window is the exact published_at range.
 */

const KINDS = {
  post: {table: sql.table('conversation_posts'), fields: ['title_tokens', 'content_tokens']},
  comment: {table: sql.table('conversation_comments'), fields: ['content_tokens']},
} as const
type Kind = keyof typeof KINDS

/** A tsquery of lexemes given literally (no parser), every token required. */
function allOf(tokens: readonly string[]): string {
  return tokens.map((token) => `'${token.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' & ')
}

/** Occurrences of a phrase in a document of `kind`: the sum over its fields. */
function occurrences(kind: Kind, tokens: readonly string[]): RawBuilder<number> {
  const phrase = sql`${[...tokens]}::text[]`
  return sql<number>`(${sql.join(
    KINDS[kind].fields.map((field) => sql`conversation_phrase_count(d.${sql.ref(field)}, ${phrase})`),
    sql` + `,
  )})`
}

function inWindow(query: SearchQuery): RawBuilder<boolean> {
  return sql<boolean>`d.published_at between ${query.start} and ${query.end}`
}

/** Where a summary's parts come from (repository.ts, summaryShape): the same split as on SQLite. */
export interface PostgresSummaryShape {
  counted: readonly number[]
  days?: {first: number; last: number}
  edges: readonly {start: string; end: string; sign: 1 | -1}[]
}

/**
 * One term's documents and occurrences among the documents of `kind` published in [start, end],
 * multiplied by `sign` (an edge taken away from a whole day counts negative).
 */
function termCounts(kind: Kind, t: number, tokens: readonly string[], start: string, end: string, sign: 1 | -1): RawBuilder<SummaryRow> {
  return sql<SummaryRow>`select ${t}::integer as t, ${kind}::text as kind,
      ${sign}::bigint * count(*) filter (where n > 0) as docs, ${sign}::bigint * coalesce(sum(n), 0)::bigint as matches from (
        select ${occurrences(kind, tokens)} as n from ${KINDS[kind].table} as d
        where d.published_at between ${start} and ${end} and d.search_terms @@ ${allOf(tokens)}::tsquery
      ) as hits`
}

/**
 * A document holds the term: for one token the tsvector says so exactly (it holds the document's
 * tokens as they are); a phrase needs its tokens in order in one field, and only documents
 * holding all of them are looked at. Whether it occurs at all is a substring search in the
 * field's tokens joined by spaces: a token never holds a space (the tokenizer splits text at
 * whitespace), so " a b " occurs there exactly when the phrase a b does, and PostgreSQL finds it
 * several times faster than it counts occurrences with conversation_phrase_count.
 */
function holds(kind: Kind, tokens: readonly string[]): RawBuilder<boolean> {
  const all = sql`d.search_terms @@ ${allOf(tokens)}::tsquery`
  if (tokens.length === 1) return sql<boolean>`${all}`
  const needle = ` ${tokens.join(' ')} `
  const inField = (field: string) => sql`strpos(' ' || array_to_string(d.${sql.ref(field)}, ' ') || ' ', ${needle}) > 0`
  return sql<boolean>`(${all} and (${sql.join(KINDS[kind].fields.map(inField), sql` or `)}))`
}

/**
 * Interface E's summary on PostgreSQL, as rows to add up per (t, kind). Split as on SQLite
 * (repository.ts, splitWindow): terms of one or two tokens come from the per-day statistics over
 * the window's whole days, corrected by exact counts over its ragged edges; longer phrases and
 * the uniques (documents holding any term) are counted from the documents over the exact window.
 * All of it is one statement: one snapshot however the caller runs it, and one round trip.
 */
export async function summaryCountsPostgres(db: Db, query: SearchQuery, shape: PostgresSummaryShape): Promise<SummaryRow[]> {
  const counted = new Set(shape.counted)
  const kinds = Object.keys(KINDS) as Kind[]
  const parts: RawBuilder<unknown>[] = []
  for (const [t, tokens] of query.tokens.entries()) {
    if (counted.has(t)) continue
    for (const kind of kinds) parts.push(termCounts(kind, t, tokens, query.start, query.end, 1))
  }
  if (shape.days && counted.size > 0) {
    // Terms as the statistics key them (tokens joined by a space), each under its own t: two
    // terms may share their tokens ("Pain" and "pain").
    const terms = sql.join(shape.counted.map((t) => sql`(${t}::integer, ${query.tokens[t]!.join(' ')}::text)`))
    parts.push(sql`select v.t as t, case s.kind when 0 then 'post' else 'comment' end as kind,
        sum(s.docs)::bigint as docs, sum(s.matches)::bigint as matches
      from (values ${terms}) as v(t, term)
      join conversation_term_days as s on s.term = v.term and s.kind in (0, 1) and s.day between ${shape.days.first}::integer and ${shape.days.last}::integer
      group by v.t, s.kind`)
  }
  for (const edge of shape.edges) {
    for (const t of shape.counted) {
      for (const kind of kinds) parts.push(termCounts(kind, t, query.tokens[t]!, edge.start, edge.end, edge.sign))
    }
  }
  for (const kind of kinds) {
    // Each term's tsvector test is one GIN scan; PostgreSQL ORs their bitmaps and reads each
    // candidate once.
    const any = sql.join(
      query.tokens.map((tokens) => holds(kind, tokens)),
      sql` or `,
    )
    parts.push(sql`select -1 as t, ${kind}::text as kind, count(*)::bigint as docs, 0::bigint as matches from ${KINDS[kind].table} as d
      where ${inWindow(query)} and (${any})`)
  }
  // No parallel workers for it (in the caller's transaction; outside one this changes nothing):
  // its parts are small index reads, and starting workers for them took several times as long
  // as the reads, more so with many summaries at once on a few cores.
  await sql`select set_config('max_parallel_workers_per_gather', '0', true)`.execute(db)
  const result = await sql<SummaryRow>`${sql.join(
    parts.map((part) => sql`(${part})`),
    sql` union all `,
  )}`.execute(db)
  return result.rows.map((row) => ({t: Number(row.t), kind: row.kind, docs: Number(row.docs), matches: Number(row.matches)}))
}

export async function matchedPostsPostgres(db: Db, query: SearchQuery, limit: number): Promise<MatchedPost[]> {
  const hits = query.tokens.flatMap((tokens, t) => [
    sql`select ${1 << t}::integer as bit, d.id as post_id from conversation_posts as d
        where ${inWindow(query)} and d.search_terms @@ ${allOf(tokens)}::tsquery and ${occurrences('post', tokens)} > 0`,
    sql`select ${1 << t}::integer as bit, d.post_id as post_id from conversation_comments as d
        where ${inWindow(query)} and d.search_terms @@ ${allOf(tokens)}::tsquery and ${occurrences('comment', tokens)} > 0`,
  ])
  const result = await sql<MatchedPost>`
    select p.id as id, m.mask as mask from (
      select post_id, bit_or(bit) as mask from (${sql.join(hits, sql` union all `)}) as h group by post_id
    ) as m join conversation_posts p on p.id = m.post_id
    order by p.published_at, p.id limit ${limit}`.execute(db)
  return result.rows.map((row) => ({id: Number(row.id), mask: Number(row.mask)}))
}
