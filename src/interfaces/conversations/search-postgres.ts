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

export async function summaryCountsPostgres(db: Db, query: SearchQuery): Promise<SummaryRow[]> {
  const rows: SummaryRow[] = []
  for (const kind of Object.keys(KINDS) as Kind[]) {
    const {table} = KINDS[kind]
    for (const [t, tokens] of query.tokens.entries()) {
      const result = await sql<{docs: number; matches: number}>`
        select count(*) filter (where n > 0) as docs, coalesce(sum(n), 0) as matches from (
          select ${occurrences(kind, tokens)} as n from ${table} as d
          where ${inWindow(query)} and d.search_terms @@ ${allOf(tokens)}::tsquery
        ) as hits`.execute(db)
      const row = result.rows[0]!
      rows.push({t, kind, docs: Number(row.docs), matches: Number(row.matches)})
    }
    const any = sql.join(
      query.tokens.map((tokens) => sql`${occurrences(kind, tokens)} > 0`),
      sql` or `,
    )
    const anyQuery = query.tokens.map((tokens) => `(${allOf(tokens)})`).join(' | ')
    const uniques = await sql<{docs: number}>`
      select count(*) as docs from ${table} as d where ${inWindow(query)} and d.search_terms @@ ${anyQuery}::tsquery and (${any})`.execute(db)
    rows.push({t: -1, kind, docs: Number(uniques.rows[0]!.docs), matches: 0})
  }
  return rows
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
