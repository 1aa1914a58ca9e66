import {CompiledQuery, sql} from 'kysely'
import type {Db} from '../../store/database.js'
import type {ApiKeyRow, AuthorRow, CommentRow, NewApiKeyRow, NewAuthorRow, NewCommentRow, NewPostRow, PostRow} from './tables.js'

/** The FTS5 tokenizer of both indexes; query terms are split by the very same tokenizer. */
export const TOKENIZER = 'unicode61 remove_diacritics 0'

/**
 * Splits each term into the tokens FTS5 itself would index it as, by writing the terms into a
 * scratch FTS5 table on this connection and reading its token positions back. Doing it in SQLite
 * rather than in JavaScript means a term can never be split or case-folded differently from the
 * documents it is compared with. Must run while the caller holds the connection (a transaction).
 */
export async function tokenizeTerms(trx: Db, terms: readonly string[]): Promise<string[][]> {
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

/** One search: each term as its FTS5 tokens, and the inclusive window of published_at. */
export interface SearchQuery {
  tokens: readonly (readonly string[])[]
  /** ISO 8601 UTC with milliseconds, as stored. */
  start: string
  end: string
}

const KINDS = {
  post: {terms: 'conversation_post_terms', docs: 'conversation_posts'},
  comment: {terms: 'conversation_comment_terms', docs: 'conversation_comments'},
} as const

const ID_BITS = 31n
const LAST_SECOND = 2n ** 32n - 1n

function second(isoTime: string): bigint {
  const s = BigInt(Math.floor(new Date(isoTime).getTime() / 1000))
  return s < 0n ? 0n : s > LAST_SECOND ? LAST_SECOND : s
}

/**
 * The window as ranges of search keys (see the migration): every key in [lo, hi] was published
 * in a second the window touches, and every key in [loInner, hiInner] in a second wholly inside
 * it. Only documents of the two boundary seconds need their exact published_at read.
 */
export function windowKeys(start: string, end: string): {lo: bigint; hi: bigint; loInner: bigint; hiInner: bigint} {
  const first = second(start)
  const last = second(end)
  return {
    lo: first << ID_BITS,
    hi: (last << ID_BITS) | (2n ** ID_BITS - 1n),
    loInner: (first + 1n) << ID_BITS,
    hiInner: (last << ID_BITS) - 1n,
  }
}

type Parameter = string | bigint

/**
 * The common table expressions that find every (term, kind, document, occurrences) hit in the
 * window. An occurrence is a position where the term's tokens appear consecutively in one field,
 * read from the index's own position lists (fts5vocab `instance`), so the count is exact and
 * agrees with what FTS5 would match; overlapping occurrences of a phrase each count. `doc` is the
 * document's search key.
 */
function hitsSql(query: SearchQuery): {text: string; parameters: Parameter[]} {
  const ctes: string[] = []
  const parts: string[] = []
  const parameters: Parameter[] = []
  const keys = windowKeys(query.start, query.end)
  query.tokens.forEach((tokens, t) => {
    for (const [kind, tables] of Object.entries(KINDS)) {
      const name = `${kind[0]}${t}`
      // Each token's positions in the window, shifted back by the token's place in the phrase: a
      // phrase occurs where all its tokens share one (doc, field, start) — one sort, no joins.
      const positions = tokens.map((token, i) => {
        parameters.push(token, keys.lo, keys.hi, keys.loInner, keys.hiInner, query.start, query.end)
        return (
          `select doc, col, "offset" - ${i} as start from ${tables.terms} where term = ? and doc between ? and ? ` +
          `and (doc between ? and ? or (select published_at from ${tables.docs} where search_key = doc) between ? and ?)`
        )
      })
      const starts =
        positions.length === 1
          ? `select doc from (${positions[0]})`
          : `select doc from (${positions.join(' union all ')}) group by doc, col, start having count(*) = ${positions.length}`
      ctes.push(`${name} as (select doc, count(*) as n from (${starts}) group by doc)`)
      parts.push(`select ${t} as t, '${kind}' as kind, doc, n from ${name}`)
    }
  })
  ctes.push(`hits as materialized (${parts.join(' union all ')})`)
  return {text: `with ${ctes.join(',\n')}`, parameters}
}

/**
 * The whole summary as one statement: per term and kind the documents and occurrences, and per
 * kind the distinct documents hit by any term (t = -1). Exported for the benchmark, which hands
 * the same statement to the sqlite3 shell.
 */
export function summarySql(query: SearchQuery): {text: string; parameters: Parameter[]} {
  const hits = hitsSql(query)
  return {
    text:
      `${hits.text}\n` +
      `select t, kind, count(*) as docs, sum(n) as matches from hits group by t, kind\n` +
      `union all select -1 as t, kind, count(distinct doc) as docs, 0 as matches from hits group by kind`,
    parameters: hits.parameters,
  }
}

/** A statement with its parameters written in as SQL literals, for the sqlite3 shell. */
export function inlineSql(statement: {text: string; parameters: readonly Parameter[]}): string {
  let index = 0
  return statement.text.replace(/\?/g, () => {
    const value = statement.parameters[index++]!
    return typeof value === 'bigint' ? value.toString() : `'${value.replace(/'/g, "''")}'`
  })
}

export interface SummaryRow {
  t: number
  kind: 'post' | 'comment'
  docs: number
  matches: number
}

export async function summaryCounts(db: Db, query: SearchQuery): Promise<SummaryRow[]> {
  if (query.tokens.length === 0) return []
  const {text, parameters} = summarySql(query)
  return rawQuery<SummaryRow>(db, text, parameters)
}

export interface HitRow {
  t: number
  kind: 'post' | 'comment'
  post_id: number
}

/** Every hit with the post it belongs to (the post itself, or the commented post). */
export async function hits(db: Db, query: SearchQuery): Promise<HitRow[]> {
  if (query.tokens.length === 0) return []
  const base = hitsSql(query)
  const text =
    `${base.text}\n` +
    `select h.t, h.kind, coalesce(p.id, c.post_id) as post_id from hits h ` +
    `left join conversation_posts p on h.kind = 'post' and p.search_key = h.doc ` +
    `left join conversation_comments c on h.kind = 'comment' and c.search_key = h.doc`
  return rawQuery<HitRow>(db, text, base.parameters)
}

async function rawQuery<T>(db: Db, text: string, parameters: readonly Parameter[]): Promise<T[]> {
  return (await db.executeQuery<T>(CompiledQuery.raw(text, [...parameters]))).rows
}

export async function postsByIds(db: Db, ids: readonly number[]): Promise<PostRow[]> {
  const rows: PostRow[] = []
  for (let i = 0; i < ids.length; i += 500) {
    rows.push(...(await db.selectFrom('conversation_posts').selectAll().where('id', 'in', ids.slice(i, i + 500)).execute()))
  }
  return rows.sort((a, b) => (a.published_at < b.published_at ? -1 : a.published_at > b.published_at ? 1 : a.id - b.id))
}

export async function commentsOfPosts(db: Db, postIds: readonly number[]): Promise<CommentRow[]> {
  const rows: CommentRow[] = []
  for (let i = 0; i < postIds.length; i += 500) {
    rows.push(...(await db.selectFrom('conversation_comments').selectAll().where('post_id', 'in', postIds.slice(i, i + 500)).execute()))
  }
  return rows.sort((a, b) => (a.published_at < b.published_at ? -1 : a.published_at > b.published_at ? 1 : a.id - b.id))
}

export async function authorsByIds(db: Db, ids: readonly string[]): Promise<Map<string, AuthorRow>> {
  const map = new Map<string, AuthorRow>()
  const unique = [...new Set(ids)]
  for (let i = 0; i < unique.length; i += 500) {
    for (const row of await db.selectFrom('conversation_authors').selectAll().where('id', 'in', unique.slice(i, i + 500)).execute()) map.set(row.id, row)
  }
  return map
}

/** Inserts or replaces authors, many rows per statement. */
export async function upsertAuthors(db: Db, rows: readonly NewAuthorRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 400) {
    await db
      .insertInto('conversation_authors')
      .values(rows.slice(i, i + 400))
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          specialty: eb.ref('excluded.specialty'),
          country_of_practice: eb.ref('excluded.country_of_practice'),
          zipcode: eb.ref('excluded.zipcode'),
          post_badge: eb.ref('excluded.post_badge'),
          comment_badge: eb.ref('excluded.comment_badge'),
        })),
      )
      .execute()
  }
}

/** Removes posts (their comments go with them, and the triggers drop both from the indexes). */
export async function deletePosts(db: Db, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500)
    await db.deleteFrom('conversation_comments').where('post_id', 'in', chunk).execute()
    await db.deleteFrom('conversation_posts').where('id', 'in', chunk).execute()
  }
}

export async function insertPosts(db: Db, rows: readonly NewPostRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 300) await db.insertInto('conversation_posts').values(rows.slice(i, i + 300)).execute()
}

export async function insertComments(db: Db, rows: readonly NewCommentRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 300) await db.insertInto('conversation_comments').values(rows.slice(i, i + 300)).execute()
}

/** Comment ids already attached to a post other than the one being loaded. */
export async function commentOwners(db: Db, ids: readonly number[]): Promise<Map<number, number>> {
  const owners = new Map<number, number>()
  for (let i = 0; i < ids.length; i += 500) {
    for (const row of await db.selectFrom('conversation_comments').select(['id', 'post_id']).where('id', 'in', ids.slice(i, i + 500)).execute()) owners.set(row.id, row.post_id)
  }
  return owners
}

export async function countPosts(db: Db): Promise<{posts: number; comments: number}> {
  const posts = await db.selectFrom('conversation_posts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  const comments = await db.selectFrom('conversation_comments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  return {posts: Number(posts.n), comments: Number(comments.n)}
}

export async function maxIds(db: Db): Promise<{post: number; comment: number}> {
  const post = await db.selectFrom('conversation_posts').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst()
  const comment = await db.selectFrom('conversation_comments').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst()
  return {post: Number(post?.m ?? 0), comment: Number(comment?.m ?? 0)}
}

export async function insertApiKey(db: Db, row: NewApiKeyRow): Promise<void> {
  await db.insertInto('conversation_api_keys').values(row).execute()
}

export async function findApiKeyByHash(db: Db, hash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('conversation_api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst()
}

export async function findApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('conversation_api_keys').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function updateApiKeyRow(db: Db, id: string, patch: Partial<Omit<ApiKeyRow, 'id' | 'key_hash' | 'client_id' | 'created_at'>>): Promise<void> {
  await db.updateTable('conversation_api_keys').set(patch).where('id', '=', id).execute()
}

/** Gives back a data call whose answer could not be produced, if its period has not moved on. */
export async function refundDataCall(db: Db, keyId: string, periodStartedAt: string): Promise<void> {
  await db
    .updateTable('conversation_api_keys')
    .set((eb) => ({data_calls_used: eb('data_calls_used', '-', 1)}))
    .where('id', '=', keyId)
    .where('period_started_at', '=', periodStartedAt)
    .where('data_calls_used', '>', 0)
    .execute()
}

/**
 * Runs `fn` in a deferred (read) transaction on one connection: a consistent snapshot for several
 * statements without taking the write lock, and the scratch tokenizer table on the same connection.
 */
export async function readTransaction<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`begin`.execute(conn)
    try {
      const result = await fn(conn)
      await sql`commit`.execute(conn)
      return result
    } catch (error) {
      await sql`rollback`.execute(conn)
      throw error
    }
  })
}

export async function insertCall(db: Db, row: {id: string; key_id: string; method: string; query: string; created_at: string}): Promise<void> {
  await db.insertInto('conversation_calls').values(row).execute()
}
