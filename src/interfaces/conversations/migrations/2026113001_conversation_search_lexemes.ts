import {sql, type Kysely} from 'kysely'
import {isPostgres} from '../../../store/dialect.js'

/**
 * PostgreSQL only (recorded, and empty, on SQLite): the GIN-indexed tsvector of each post and
 * comment gains two kinds of lexeme beside its distinct tokens, so that the index answers on its
 * own what it could only narrow before (see ../search-postgres.ts):
 * - each pair of adjacent tokens in one field, written `first second` (a token never holds a
 *   space), so a document holds a two-token phrase exactly when it holds that lexeme;
 * - the UTC year, month and day of its publication, written `@2024`, `@2024-03` and
 *   `@2024-03-14` (a token never holds `@` or `-`), so a window's whole days are a few lexemes
 *   that GIN intersects with the terms, instead of a bitmap of every document in the window read
 *   from the published_at index.
 * A token or pair longer than a lexeme may be (2,047 bytes) is left out: array_to_tsvector would
 * store it with its length wrapped, as a lexeme it does not hold, while a term (at most 200
 * characters) can never be one.
 *
 * The column is generated, and PostgreSQL 15 cannot change a generated column's expression, so
 * it is dropped (with its index) and added again: every row's tsvector is rebuilt from the tokens
 * it already holds, in the migration's transaction. Nothing else in the rows changes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db)
}

/** Bytes a tsvector lexeme may hold (PostgreSQL's MAXSTRLEN). */
export const MAX_LEXEME_BYTES = 2047

const STATEMENTS = [
  `create function conversation_token_lexemes(doc text[]) returns text[] language sql immutable parallel safe as $$
     select coalesce(array_agg(lexeme), '{}') from (
       select doc[i] as lexeme from generate_subscripts(doc, 1) as i
       union all
       select doc[i] || ' ' || doc[i + 1] from generate_subscripts(doc, 1) as i where i < cardinality(doc)
     ) as lexemes where octet_length(lexeme) <= ${MAX_LEXEME_BYTES}
   $$`,
  `create function conversation_date_lexemes(published_at text) returns text[] language sql immutable parallel safe as $$
     select array['@' || substr(published_at, 1, 4), '@' || substr(published_at, 1, 7), '@' || substr(published_at, 1, 10)]
   $$`,
  'alter table conversation_posts drop column search_terms',
  `alter table conversation_posts add column search_terms tsvector generated always as (array_to_tsvector(
     conversation_token_lexemes(title_tokens) || conversation_token_lexemes(content_tokens) || conversation_date_lexemes(published_at))) stored`,
  'alter table conversation_comments drop column search_terms',
  `alter table conversation_comments add column search_terms tsvector generated always as (array_to_tsvector(
     conversation_token_lexemes(content_tokens) || conversation_date_lexemes(published_at))) stored`,
  'create index conversation_posts_search_terms on conversation_posts using gin (search_terms)',
  'create index conversation_comments_search_terms on conversation_comments using gin (search_terms)',
]
