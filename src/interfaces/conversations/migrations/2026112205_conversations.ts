import {sql, type ColumnDefinitionBuilder, type Kysely} from 'kysely'
import {isPostgres} from '../../../store/dialect.js'

/**
 * Interface E: authors, posts and comments in ordinary tables, each text table shadowed by an
 * FTS5 index with external content (the text lives once, in the ordinary table) kept in sync by
 * triggers, and an fts5vocab `instance` view per index so occurrences can be counted exactly from
 * the index's own token positions. API keys and the log of answered calls live here too.
 *
 * The indexes are keyed not by post or comment id but by `search_key` = (published_at in Unix
 * seconds << 31) | id, a generated column. Index order is then time order, so a time window is a
 * range of index rowids and a search never has to look rows up to test their date. It is why ids
 * are below 2^31 and publication dates fall in 1970..2100.
 */
const TOKENIZER = `unicode61 remove_diacritics 0`
const SEARCH_KEY = sql`((cast(strftime('%s', published_at) as integer) << 31) | id)`

/**
 * The search key column. SQLite computes it as a generated column; PostgreSQL cannot (turning text
 * into a time is not an immutable expression there), so a trigger sets it on every write instead
 * (see postgresSearchKey) and the column is an ordinary bigint.
 */
function searchKeyColumn(db: Kysely<unknown>): [string, (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  return isPostgres(db) ? ['bigint', (c) => c.notNull()] : ['integer', (c) => c.notNull().generatedAlwaysAs(SEARCH_KEY).stored()]
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const [searchKeyType, searchKey] = searchKeyColumn(db)
  await db.schema
    .createTable('conversation_authors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('specialty', 'text', (c) => c.notNull())
    .addColumn('country_of_practice', 'text', (c) => c.notNull())
    .addColumn('zipcode', 'text', (c) => c.notNull())
    .addColumn('post_badge', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('comment_badge', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()

  await db.schema
    .createTable('conversation_posts')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('author_id', 'text', (c) => c.notNull().references('conversation_authors.id'))
    .addColumn('published_at', 'text', (c) => c.notNull())
    .addColumn('rating', 'text', (c) => c.notNull())
    .addColumn('iconsult', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('solved_at', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('search_key', sql.raw(searchKeyType), searchKey)
    .execute()
  await db.schema.createIndex('conversation_posts_search_key').on('conversation_posts').column('search_key').unique().execute()
  await db.schema.createIndex('conversation_posts_published').on('conversation_posts').column('published_at').execute()

  await db.schema
    .createTable('conversation_comments')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('post_id', 'integer', (c) => c.notNull().references('conversation_posts.id').onDelete('cascade'))
    .addColumn('author_id', 'text', (c) => c.notNull().references('conversation_authors.id'))
    .addColumn('published_at', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('helpful_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('search_key', sql.raw(searchKeyType), searchKey)
    .execute()
  await db.schema.createIndex('conversation_comments_search_key').on('conversation_comments').column('search_key').unique().execute()
  await db.schema.createIndex('conversation_comments_published').on('conversation_comments').column('published_at').execute()
  await db.schema.createIndex('conversation_comments_post').on('conversation_comments').columns(['post_id', 'published_at']).execute()

  if (isPostgres(db)) {
    for (const statement of postgresSearchKey()) await sql.raw(statement).execute(db)
    for (const statement of postgresSearchIndex()) await sql.raw(statement).execute(db)
  } else {
    await sql
      .raw(`create virtual table conversation_post_index using fts5(title, content, content='conversation_posts', content_rowid='search_key', tokenize='${TOKENIZER}')`)
      .execute(db)
    await sql
      .raw(`create virtual table conversation_comment_index using fts5(content, content='conversation_comments', content_rowid='search_key', tokenize='${TOKENIZER}')`)
      .execute(db)
    await sql.raw(`create virtual table conversation_post_terms using fts5vocab(conversation_post_index, instance)`).execute(db)
    await sql.raw(`create virtual table conversation_comment_terms using fts5vocab(conversation_comment_index, instance)`).execute(db)
    for (const statement of syncTriggers()) await sql.raw(statement).execute(db)
  }

  await db.schema
    .createTable('conversation_api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('methods', 'text', (c) => c.notNull())
    .addColumn('data_call_allowance', 'integer', (c) => c.notNull())
    .addColumn('data_calls_used', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('renew_days', 'integer')
    .addColumn('period_started_at', 'text', (c) => c.notNull())
    .addColumn('subscription_ends_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('conversation_api_keys_client').on('conversation_api_keys').column('client_id').execute()

  await db.schema
    .createTable('conversation_calls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull().references('conversation_api_keys.id').onDelete('cascade'))
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('conversation_calls_key').on('conversation_calls').columns(['key_id', 'created_at']).execute()
}

/** PostgreSQL: the trigger that keeps search_key = (published_at in Unix seconds << 31) | id. */
function postgresSearchKey(): string[] {
  return [
    `create function conversation_search_key() returns trigger language plpgsql as $$
     begin
       new.search_key := (floor(extract(epoch from new.published_at::timestamptz))::bigint << 31) | new.id;
       return new;
     end $$`,
    `create trigger conversation_posts_search_key before insert or update of id, published_at on conversation_posts
       for each row execute function conversation_search_key()`,
    `create trigger conversation_comments_search_key before insert or update of id, published_at on conversation_comments
       for each row execute function conversation_search_key()`,
  ]
}

/**
 * PostgreSQL's search index. Each text field keeps its tokens, in order, exactly as SQLite's FTS5
 * tokenizer (unicode61, no diacritics removal) splits it (the service tokenizes with an in-memory
 * SQLite, so both stores agree on every token); a tsvector of the distinct tokens, built from them
 * without PostgreSQL's own parser, is GIN-indexed to find candidate documents, and
 * conversation_phrase_count counts a phrase's occurrences, overlapping ones included, in one
 * field's tokens. Null tokens mean "not tokenized yet" (rows copied in by copy-store until it
 * fills them).
 */
function postgresSearchIndex(): string[] {
  return [
    `alter table conversation_posts add column title_tokens text[], add column content_tokens text[],
       add column search_terms tsvector generated always as (array_to_tsvector(coalesce(title_tokens, '{}') || coalesce(content_tokens, '{}'))) stored`,
    `alter table conversation_comments add column content_tokens text[],
       add column search_terms tsvector generated always as (array_to_tsvector(coalesce(content_tokens, '{}'))) stored`,
    'create index conversation_posts_search_terms on conversation_posts using gin (search_terms)',
    'create index conversation_comments_search_terms on conversation_comments using gin (search_terms)',
    `create function conversation_phrase_count(doc text[], phrase text[]) returns integer language sql immutable parallel safe as $$
       select count(*)::integer from generate_subscripts(doc, 1) as i where doc[i:i + cardinality(phrase) - 1] = phrase
     $$`,
  ]
}

/** Statements that keep both FTS5 indexes equal to their content tables. */
export function syncTriggers(): string[] {
  return [
    `create trigger conversation_posts_ai after insert on conversation_posts begin
       insert into conversation_post_index(rowid, title, content) values (new.search_key, new.title, new.content);
     end`,
    `create trigger conversation_posts_ad after delete on conversation_posts begin
       insert into conversation_post_index(conversation_post_index, rowid, title, content) values ('delete', old.search_key, old.title, old.content);
     end`,
    `create trigger conversation_posts_au after update of id, published_at, title, content on conversation_posts begin
       insert into conversation_post_index(conversation_post_index, rowid, title, content) values ('delete', old.search_key, old.title, old.content);
       insert into conversation_post_index(rowid, title, content) values (new.search_key, new.title, new.content);
     end`,
    `create trigger conversation_comments_ai after insert on conversation_comments begin
       insert into conversation_comment_index(rowid, content) values (new.search_key, new.content);
     end`,
    `create trigger conversation_comments_ad after delete on conversation_comments begin
       insert into conversation_comment_index(conversation_comment_index, rowid, content) values ('delete', old.search_key, old.content);
     end`,
    `create trigger conversation_comments_au after update of id, published_at, content on conversation_comments begin
       insert into conversation_comment_index(conversation_comment_index, rowid, content) values ('delete', old.search_key, old.content);
       insert into conversation_comment_index(rowid, content) values (new.search_key, new.content);
     end`,
  ]
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of ['conversation_post_terms', 'conversation_comment_terms', 'conversation_post_index', 'conversation_comment_index']) {
    await sql.raw(`drop table if exists ${name}`).execute(db)
  }
  for (const table of ['conversation_calls', 'conversation_api_keys', 'conversation_comments', 'conversation_posts', 'conversation_authors']) {
    await db.schema.dropTable(table).execute()
  }
}
