import {CompiledQuery, sql} from 'kysely'
import type {ConversationsDb as Db} from './tables.js'
import type {Page, PageAsk} from '../../lib/page.js'
import {contextOf, exclusiveDirect} from '../../store/context.js'
import {inBatch} from '../../store/writer.js'
import {isPostgres} from '../../store/dialect.js'
import {tokenizeTexts} from '../../store/fts-tokens.js'
import {countTermDays, KIND_CODE, MAX_COUNTED_TOKENS, phraseOccurrences, TermDayCounts, tokenizeDocuments} from './term-days.js'
import {type Alongside, matchedPostsPostgres, summaryCountsPostgres} from './search-postgres.js'
import {splitWindow, type WindowEdge} from './window.js'
import type {MatchedPost, SearchQuery, SummaryRow} from './search-types.js'
import type {ApiKeyRow, AuthorRow, CommentRow, NewApiKeyRow, NewAuthorRow, NewCommentRow, NewPostRow, PostRow} from './tables.js'

const KINDS = {
  post: {index: 'conversation_post_index', terms: 'conversation_post_terms', docs: 'conversation_posts'},
  comment: {index: 'conversation_comment_index', terms: 'conversation_comment_terms', docs: 'conversation_comments'},
} as const
type Kind = keyof typeof KINDS

const ID_BITS = 31n
const LAST_SECOND = 2n ** 32n - 1n
const ID_MASK = (2n ** ID_BITS - 1n).toString()
/** The largest search key: (LAST_SECOND << ID_BITS) | ID_MASK, the largest signed 64-bit integer. */
const MAX_KEY = 2n ** 63n - 1n

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
    // A window starting in the key's last second (2106 and after, clamped) has no inner range;
    // the bound must still fit the 64-bit integer the store binds.
    loInner: first === LAST_SECOND ? MAX_KEY : (first + 1n) << ID_BITS,
    hiInner: (last << ID_BITS) - 1n,
  }
}

type Parameter = string | bigint
type Sql = {text: string; parameters: Parameter[]}

/**
 * A term as one FTS5 phrase: its text inside double quotes, a quote doubled. Inside a string FTS5
 * reads no operators (`OR`, `*`, `-`, `:`, parentheses are plain text), and it splits the string
 * with the index's tokenizer, so the phrase is exactly the term's tokens in order, the same tokens
 * tokenizeTexts splits it into.
 */
export function phrase(term: string): string {
  return `"${term.replace(/"/g, '""')}"`
}

/** Statement text with its parameters, built piece by piece in the order the `?`s appear. */
class Statement {
  readonly parameters: Parameter[] = []
  private readonly query: SearchQuery
  private readonly keys: ReturnType<typeof windowKeys>
  constructor(query: SearchQuery) {
    this.query = query
    this.keys = windowKeys(query.start, query.end)
  }

  /**
   * `column` (a search key) lies in the window: a key range (which FTS5 MATCH seeks to; the vocab
   * table can only filter by it), and the exact time looked up only for keys in the window's
   * first or last second.
   */
  inWindow(column: string, kind: Kind): string {
    const {lo, hi, loInner, hiInner} = this.keys
    this.parameters.push(lo, hi, loInner, hiInner, this.query.start, this.query.end)
    return `${column} between ? and ? and (${column} between ? and ? or (select published_at from ${KINDS[kind].docs} where search_key = ${column}) between ? and ?)`
  }

  /**
   * Search keys of the documents in the window that contain the FTS5 query `match`. The index is
   * aliased so that `rowid` in the boundary lookup means the index row, not the content table's.
   */
  documents(kind: Kind, match: string): string {
    const {index} = KINDS[kind]
    this.parameters.push(match)
    return `select f.rowid as doc from ${index} as f where f.${index} match ? and ${this.inWindow('f.rowid', kind)}`
  }

  /**
   * Occurrences of a term in the window's documents of one kind, read from the index's own
   * position lists (fts5vocab `instance`): each position of the first token that is followed, in
   * the same field, by the term's other tokens in order. Overlapping occurrences each count
   * (`very very` occurs twice in `very very very`).
   */
  occurrences(kind: Kind, tokens: readonly string[]): string {
    const positions = tokens.map((token, i) => {
      this.parameters.push(token)
      return `select doc, col, "offset" - ${i} as start from ${KINDS[kind].terms} where term = ? and ${this.inWindow('doc', kind)}`
    })
    const [first, ...rest] = positions
    const followed = rest.map((p) => `(doc, col, start) in (${p})`)
    return `select count(*) from (${first})${followed.length > 0 ? ` where ${followed.join(' and ')}` : ''}`
  }
}

/**
 * The summary from the search index alone, as one statement. Rows (t, kind, docs, matches): per
 * term and kind the documents that contain it and its occurrences, and with t = -1 per kind the
 * distinct documents that contain any term. Documents are found with FTS5 MATCH and a rowid
 * range, which reads only the window's part of each doclist; occurrences need token positions,
 * which SQL reaches only through fts5vocab `instance`. Terms in `skip` get no rows of their own
 * (the per-day statistics count them) but still count towards the uniques. Exported for the
 * benchmark, which checks the service's counts against it in the sqlite3 shell.
 */
export function summarySql(query: SearchQuery, skip: ReadonlySet<number> = new Set()): Sql {
  const statement = new Statement(query)
  const rows: string[] = []
  query.terms.forEach((term, t) => {
    if (skip.has(t)) return
    for (const kind of Object.keys(KINDS) as Kind[]) {
      const docs = statement.documents(kind, phrase(term))
      const matches = statement.occurrences(kind, query.tokens[t]!)
      rows.push(`select ${t} as t, '${kind}' as kind, (select count(*) from (${docs})) as docs, (${matches}) as matches`)
    }
  })
  const any = query.terms.map(phrase).join(' OR ')
  for (const kind of Object.keys(KINDS) as Kind[]) rows.push(`select -1 as t, '${kind}' as kind, (select count(*) from (${statement.documents(kind, any)})) as docs, 0 as matches`)
  return {text: rows.join('\nunion all '), parameters: statement.parameters}
}

/**
 * How a summary is counted on SQLite. Terms of one or two tokens (`counted`) are summed from the
 * per-day statistics over whole days (`days`), and the window's ragged ends are made exact by
 * counting, token by token, the documents of each edge that contain any of them and adding or
 * taking away what they hold (`edges`, see splitWindow). The rest, longer phrases and the
 * uniques, comes from the search index (`index`), over the exact window.
 */
export interface SummaryPlan {
  counted: number[]
  index: Sql
  days: {t: number; sql: Sql}[]
  edges: SummaryEdge[]
}

/**
 * One edge of one kind: `sql` reads every document in its stretch of time, through the search
 * key's index, at most EDGE_SCAN_LIMIT + 1 of them; only when there are more than that does
 * `wide` read the documents of the stretch that contain a term, through the search index. Either
 * way the tokens are counted in JavaScript, so both give the same counts: the first is the cheap
 * one for the short stretches most windows leave (an end at 23:59:59 leaves one second), where
 * the index would walk each term's whole list of documents for none.
 */
export interface SummaryEdge {
  kind: Kind
  sign: 1 | -1
  sql: Sql
  wide: Sql
}

/**
 * The most documents an edge reads by time before it reads through the search index instead: a
 * document read and split into tokens costs about 6.5 µs, and the index's read of a stretch
 * about 0.5 ms for posts and 1.2 ms for comments on the 200,000-post benchmark corpus.
 */
export const EDGE_SCAN_LIMIT = 64

/**
 * What decides a summary's statements on either store: the terms summed from the per-day
 * statistics (`counted`, none when the window holds no whole day worth them), the whole days, and
 * the edges that make the window exact (see splitWindow).
 */
export interface SummaryShape {
  counted: number[]
  days?: {first: number; last: number}
  edges: WindowEdge[]
}

export function summaryShape(query: SearchQuery): SummaryShape {
  const window = splitWindow(query.start, query.end)
  const counted = window.days ? query.tokens.flatMap((tokens, t) => (tokens.length <= MAX_COUNTED_TOKENS ? [t] : [])) : []
  if (counted.length === 0 || !window.days) return {counted: [], edges: []}
  return {counted, days: window.days, edges: window.edges}
}

export function summaryPlan(query: SearchQuery): SummaryPlan {
  const window = summaryShape(query)
  const {counted} = window
  const plan: SummaryPlan = {counted, index: summarySql(query, new Set(counted)), days: [], edges: []}
  if (!window.days) return plan
  const {first, last} = window.days
  // One statement per term, the same text for every term: it stays prepared whatever the query's shape.
  plan.days = counted.map((t) => ({
    t,
    sql: {
      text: 'select kind, coalesce(sum(docs), 0) as docs, coalesce(sum(matches), 0) as matches from conversation_term_days where term = ? and kind in (0, 1) and day between ? and ? group by kind',
      parameters: [query.tokens[t]!.join(' '), BigInt(first), BigInt(last)],
    },
  }))
  const any = counted.map((t) => phrase(query.terms[t]!)).join(' OR ')
  for (const {start, end, sign} of window.edges) {
    const {lo, hi} = windowKeys(start, end)
    const stretch = [lo, hi, start, end, BigInt(EDGE_SCAN_LIMIT + 1)]
    const posts = new Statement({...query, start, end})
    const postsText = `select p.title as title, p.content as content from (${posts.documents('post', any)}) h join conversation_posts p on p.search_key = h.doc`
    plan.edges.push({
      kind: 'post',
      sign,
      sql: {text: 'select title, content from conversation_posts where search_key between ? and ? and published_at between ? and ? limit ?', parameters: stretch},
      wide: {text: postsText, parameters: posts.parameters},
    })
    const comments = new Statement({...query, start, end})
    const commentsText = `select c.content as content from (${comments.documents('comment', any)}) h join conversation_comments c on c.search_key = h.doc`
    plan.edges.push({
      kind: 'comment',
      sign,
      sql: {text: 'select content from conversation_comments where search_key between ? and ? and published_at between ? and ? limit ?', parameters: stretch},
      wide: {text: commentsText, parameters: comments.parameters},
    })
  }
  return plan
}

/** A statement with its parameters written in as SQL literals, for the sqlite3 shell. */
export function inlineSql(statement: {text: string; parameters: readonly Parameter[]}): string {
  let index = 0
  return statement.text.replace(/\?/g, () => {
    const value = statement.parameters[index++]!
    return typeof value === 'bigint' ? value.toString() : `'${value.replace(/'/g, "''")}'`
  })
}

/** `alongside`: PostgreSQL only, a second connection on the same snapshot (summaryCountsPostgres). */
export async function summaryCounts(db: Db, query: SearchQuery, alongside?: Alongside): Promise<SummaryRow[]> {
  if (query.terms.length === 0) return []
  // PostgreSQL: one statement, so one snapshot whether or not the caller holds a transaction (with
  // `alongside`, two statements on the snapshot of the caller's transaction).
  if (isPostgres(db)) return sumRows(await summaryCountsPostgres(db, query, summaryShape(query), alongside))
  const plan = summaryPlan(query)
  if (plan.counted.length === 0) return rawQuery<SummaryRow>(db, plan.index.text, plan.index.parameters)
  // Several statements, one snapshot: a write landing between them could otherwise be counted in part.
  if (db.isTransaction) return countPlan(db, query, plan)
  const direct = exclusiveDirect(db)
  if (!direct) return db.transaction().execute((trx) => countPlan(trx, query, plan))
  direct('begin', [])
  try {
    return await countPlan(db, query, plan)
  } finally {
    // Nothing was written: ending the read transaction only lets the snapshot go. SQLite may
    // have ended it already (an I/O error rolls back); the error that did so is the one to report.
    try {
      direct('rollback', [])
    } catch {}
  }
}

/** Adds up the parts of a summary (whole days, edges added or taken away) into one row per term and kind. */
function totaller(): {add: (row: SummaryRow) => void; rows: () => SummaryRow[]} {
  const totals = new Map<string, SummaryRow>()
  const add = (row: SummaryRow) => {
    const key = `${row.t}:${row.kind}`
    const total = totals.get(key)
    if (total) {
      total.docs += Number(row.docs)
      total.matches += Number(row.matches)
    } else totals.set(key, {t: Number(row.t), kind: row.kind, docs: Number(row.docs), matches: Number(row.matches)})
  }
  return {add, rows: () => [...totals.values()]}
}

function sumRows(rows: readonly SummaryRow[]): SummaryRow[] {
  const totals = totaller()
  for (const row of rows) totals.add(row)
  return totals.rows()
}

async function countPlan(db: Db, query: SearchQuery, plan: SummaryPlan): Promise<SummaryRow[]> {
  const {add, rows} = totaller()
  for (const row of await rawQuery<SummaryRow>(db, plan.index.text, plan.index.parameters)) add(row)
  for (const {t, sql} of plan.days) {
    for (const row of await rawQuery<{kind: number; docs: number; matches: number}>(db, sql.text, sql.parameters)) {
      add({t, kind: Number(row.kind) === KIND_CODE.post ? 'post' : 'comment', docs: row.docs, matches: row.matches})
    }
  }
  for (const edge of plan.edges) {
    let documents = await rawQuery<ReadDocument>(db, edge.sql.text, edge.sql.parameters)
    if (documents.length > EDGE_SCAN_LIMIT) documents = await rawQuery<ReadDocument>(db, edge.wide.text, edge.wide.parameters)
    const {rows: counts} = await countInDocuments(edge.kind, documents, query.tokens, plan.counted)
    // `0 - n`, not `-n`: a count taken away from nothing is 0, never -0.
    for (const {t, docs, matches} of counts) add({t, kind: edge.kind, docs: edge.sign > 0 ? docs : 0 - docs, matches: edge.sign > 0 ? matches : 0 - matches})
  }
  return rows()
}

/** A document as an edge or a small window reads it: a post's title and content, a comment's content. */
interface ReadDocument {
  title?: string | null
  content: string
}

/**
 * The terms `counted` (indexes into `tokens`) in documents of one kind, split into tokens here as
 * the index splits them: per term the documents holding it and its occurrences in them (a phrase
 * never spans a post's title and content, as in the index), and how many documents hold any of them.
 */
async function countInDocuments(
  kind: Kind,
  documents: readonly ReadDocument[],
  tokens: SearchQuery['tokens'],
  counted: readonly number[],
): Promise<{rows: SummaryRow[]; any: number}> {
  const width = kind === 'post' ? 2 : 1
  const fields = await tokenizeTexts(documents.flatMap((d) => (kind === 'post' ? [d.title ?? '', d.content] : [d.content])))
  const rows = counted.map((t): SummaryRow => ({t, kind, docs: 0, matches: 0}))
  let any = 0
  for (let d = 0; d < documents.length; d++) {
    let hit = false
    for (const row of rows) {
      let found = 0
      for (let f = 0; f < width; f++) found += phraseOccurrences(fields[d * width + f]!, tokens[row.t]!)
      if (found > 0) {
        row.docs += 1
        row.matches += found
        hit = true
      }
    }
    if (hit) any += 1
  }
  return {rows, any}
}

/**
 * The most documents of each kind a window may hold for its summary to be counted from the
 * documents themselves (fewDocumentsSummary): splitting one into tokens costs about 6.5 µs, so
 * at most about 0.2 ms for both kinds.
 */
export const FEW_DOCUMENTS = 16

/** A window's documents of both kinds, at most `limit` + 1 of each, in one statement (one snapshot). */
const WINDOW_DOCUMENTS =
  'select * from (select 0 as kind, title, content from conversation_posts where search_key between ? and ? and published_at between ? and ? limit ?) ' +
  'union all select * from (select 1 as kind, null as title, content from conversation_comments where search_key between ? and ? and published_at between ? and ? limit ?)'

/**
 * A SQLite summary counted from the window's own documents, read by time and split into tokens
 * here as the window's edges are (countPlan), when neither kind's part of the window holds more
 * than `limit` documents: an empty window, or a short one. Undefined when one holds more (or on
 * PostgreSQL): then the search index counts it. The same counts as the index's, for a read of at
 * most 2 × (`limit` + 1) rows through the search key's index.
 */
export async function fewDocumentsSummary(db: Db, query: SearchQuery, limit = FEW_DOCUMENTS): Promise<SummaryRow[] | undefined> {
  if (isPostgres(db) || query.terms.length === 0) return undefined
  const {lo, hi} = windowKeys(query.start, query.end)
  const stretch = [lo, hi, query.start, query.end, BigInt(limit + 1)]
  const read = await rawQuery<ReadDocument & {kind: number}>(db, WINDOW_DOCUMENTS, [...stretch, ...stretch])
  const posts = read.filter((d) => Number(d.kind) === 0)
  const comments = read.filter((d) => Number(d.kind) === 1)
  if (posts.length > limit || comments.length > limit) return undefined
  const every = query.terms.map((_, t) => t)
  const rows: SummaryRow[] = []
  for (const [kind, documents] of [
    ['post', posts],
    ['comment', comments],
  ] as const) {
    const counted = await countInDocuments(kind, documents, query.tokens, every)
    rows.push(...counted.rows, {t: -1, kind, docs: counted.any, matches: 0})
  }
  return rows
}

/**
 * The posts a data call returns: every post hit in the window directly or through a comment, with
 * the terms that hit it, in answer order (published_at, then id), at most `limit` of them. One
 * row per post, so what the caller holds grows with the posts, never with the hits.
 */
export async function matchedPosts(db: Db, query: SearchQuery, limit: number): Promise<MatchedPost[]> {
  if (query.terms.length === 0) return []
  if (isPostgres(db)) return matchedPostsPostgres(db, query, limit)
  const statement = new Statement(query)
  // A search key's low 31 bits are the document's id: a post needs no lookup at all, and a
  // comment's post is one primary-key read away.
  const hits = query.terms.flatMap((term, t) => [
    `select ${t} as t, h.doc & ${ID_MASK} as post_id from (${statement.documents('post', phrase(term))}) h`,
    `select ${t} as t, c.post_id as post_id from (${statement.documents('comment', phrase(term))}) h join conversation_comments c on c.id = h.doc & ${ID_MASK}`,
  ])
  const text = `select p.id as id, m.mask as mask from (select post_id, sum(distinct 1 << t) as mask from (${hits.join('\nunion all ')}) group by post_id) m join conversation_posts p on p.id = m.post_id order by p.published_at, p.id limit ?`
  return rawQuery<MatchedPost>(db, text, [...statement.parameters, BigInt(limit)])
}

async function rawQuery<T>(db: Db, text: string, parameters: readonly Parameter[]): Promise<T[]> {
  // A search thread's own connection runs statements straight through, past Kysely's queue.
  const direct = exclusiveDirect(db)
  if (direct) return direct(text, parameters) as T[]
  return (await db.executeQuery<T>(CompiledQuery.raw(text, [...parameters]))).rows
}

/**
 * Every column but the generated `search_key`: a 64-bit key that node:sqlite refuses to read as a
 * JavaScript number (and that no caller needs), so rows are never selected with `*`.
 */
export const POST_COLUMNS = ['id', 'author_id', 'published_at', 'rating', 'iconsult', 'solved_at', 'title', 'content'] as const satisfies readonly (keyof PostRow)[]
export const COMMENT_COLUMNS = ['id', 'post_id', 'author_id', 'published_at', 'content', 'helpful_count'] as const satisfies readonly (keyof CommentRow)[]

export async function postsByIds(db: Db, ids: readonly number[]): Promise<PostRow[]> {
  const rows: PostRow[] = []
  for (let i = 0; i < ids.length; i += 500) {
    rows.push(
      ...(await db
        .selectFrom('conversation_posts')
        .select(POST_COLUMNS)
        .where('id', 'in', ids.slice(i, i + 500))
        .execute()),
    )
  }
  return rows.sort((a, b) => (a.published_at < b.published_at ? -1 : a.published_at > b.published_at ? 1 : a.id - b.id))
}

export async function commentsOfPosts(db: Db, postIds: readonly number[]): Promise<CommentRow[]> {
  const rows: CommentRow[] = []
  for (let i = 0; i < postIds.length; i += 500) {
    rows.push(
      ...(await db
        .selectFrom('conversation_comments')
        .select(COMMENT_COLUMNS)
        .where('post_id', 'in', postIds.slice(i, i + 500))
        .execute()),
    )
  }
  return rows.sort((a, b) => (a.published_at < b.published_at ? -1 : a.published_at > b.published_at ? 1 : a.id - b.id))
}

export async function authorsByIds(db: Db, ids: readonly string[]): Promise<Map<string, AuthorRow>> {
  const map = new Map<string, AuthorRow>()
  const unique = [...new Set(ids)]
  for (let i = 0; i < unique.length; i += 500) {
    for (const row of await db
      .selectFrom('conversation_authors')
      .selectAll()
      .where('id', 'in', unique.slice(i, i + 500))
      .execute())
      map.set(row.id, row)
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

/**
 * Removes posts with their comments (the triggers drop both from the indexes), counting them out
 * of the per-day term statistics first.
 */
export async function deletePosts(db: Db, ids: readonly number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500)
    const posts = await db.selectFrom('conversation_posts').select(['published_at', 'title', 'content']).where('id', 'in', chunk).execute()
    const comments = await db.selectFrom('conversation_comments').select(['published_at', 'content']).where('post_id', 'in', chunk).execute()
    const gone = await tokenizeDocuments([...posts.map((p) => ({kind: 'post' as const, ...p})), ...comments.map((c) => ({kind: 'comment' as const, ...c}))])
    await countTermDays(db, gone, -1)
    await db.deleteFrom('conversation_comments').where('post_id', 'in', chunk).execute()
    await db.deleteFrom('conversation_posts').where('id', 'in', chunk).execute()
  }
}

const POST_INSERT = `insert into conversation_posts (${POST_COLUMNS.join(', ')}) values (${POST_COLUMNS.map(() => '?').join(', ')})`
const COMMENT_INSERT = `insert into conversation_comments (${COMMENT_COLUMNS.join(', ')}) values (${COMMENT_COLUMNS.map(() => '?').join(', ')})`

/**
 * SQLite inside a batch of the group writer: one prepared statement run per row, straight on the
 * connection the batch holds. Bulk loads spent more time building and compiling multi-row
 * queries than SQLite spent writing the rows and their index entries.
 */
function directInsert(db: Db): ((sql: string, parameters: readonly unknown[]) => unknown) | undefined {
  return inBatch(db) && !isPostgres(db) ? contextOf(db)?.direct : undefined
}

/**
 * Writes posts, counting them into the per-day term statistics in the same transaction: at once,
 * or into `counts` when given, which the caller writes (a bulk load adds up many chunks before
 * writing their statistics in key order). On PostgreSQL the same tokens fill the search columns
 * (see the migration).
 */
export async function insertPosts(db: Db, rows: readonly NewPostRow[], counts?: TermDayCounts): Promise<void> {
  const own = counts ?? new TermDayCounts()
  const direct = directInsert(db)
  for (let i = 0; i < rows.length; i += 300) {
    const chunk = rows.slice(i, i + 300)
    const tokens = await tokenizeTexts(chunk.flatMap((row) => [row.title, row.content]))
    if (direct)
      for (const row of chunk) direct(POST_INSERT, [row.id, row.author_id, row.published_at, row.rating, row.iconsult ?? 0, row.solved_at ?? null, row.title, row.content])
    else {
      const values = isPostgres(db) ? chunk.map((row, j) => ({...row, title_tokens: tokens[2 * j]!, content_tokens: tokens[2 * j + 1]!}) as NewPostRow) : chunk
      await db.insertInto('conversation_posts').values(values).execute()
    }
    for (const [j, row] of chunk.entries()) own.add('post', row.published_at, [tokens[2 * j]!, tokens[2 * j + 1]!])
  }
  if (!counts) await own.write(db, 1)
}

/** Writes comments, counting them into the per-day term statistics as insertPosts does. */
export async function insertComments(db: Db, rows: readonly NewCommentRow[], counts?: TermDayCounts): Promise<void> {
  const own = counts ?? new TermDayCounts()
  const direct = directInsert(db)
  for (let i = 0; i < rows.length; i += 300) {
    const chunk = rows.slice(i, i + 300)
    const tokens = await tokenizeTexts(chunk.map((row) => row.content))
    if (direct) for (const row of chunk) direct(COMMENT_INSERT, [row.id, row.post_id, row.author_id, row.published_at, row.content, row.helpful_count ?? 0])
    else {
      const values = isPostgres(db) ? chunk.map((row, j) => ({...row, content_tokens: tokens[j]!}) as NewCommentRow) : chunk
      await db.insertInto('conversation_comments').values(values).execute()
    }
    for (const [j, row] of chunk.entries()) own.add('comment', row.published_at, [tokens[j]!])
  }
  if (!counts) await own.write(db, 1)
}

/**
 * Fills PostgreSQL's token columns where they are empty (rows copied in by copy-store, which
 * moves rows, not indexes). Returns how many documents it tokenized.
 */
export async function tokenizeMissing(db: Db): Promise<number> {
  if (!isPostgres(db)) return 0
  let done = 0
  for (;;) {
    const posts = (await sql<{id: number; title: string; content: string}>`select id, title, content from conversation_posts where title_tokens is null limit 500`.execute(db)).rows
    if (posts.length === 0) break
    const tokens = await tokenizeTexts(posts.flatMap((p) => [p.title, p.content]))
    for (const [i, post] of posts.entries()) {
      await sql`update conversation_posts set title_tokens = ${tokens[2 * i]!}::text[], content_tokens = ${tokens[2 * i + 1]!}::text[] where id = ${post.id}`.execute(db)
    }
    done += posts.length
  }
  for (;;) {
    const comments = (await sql<{id: number; content: string}>`select id, content from conversation_comments where content_tokens is null limit 500`.execute(db)).rows
    if (comments.length === 0) break
    const tokens = await tokenizeTexts(comments.map((c) => c.content))
    for (const [i, comment] of comments.entries()) {
      await sql`update conversation_comments set content_tokens = ${tokens[i]!}::text[] where id = ${comment.id}`.execute(db)
    }
    done += comments.length
  }
  return done
}

/** Comment ids already attached to a post other than the one being loaded. */
export async function commentOwners(db: Db, ids: readonly number[]): Promise<Map<number, number>> {
  const owners = new Map<number, number>()
  for (let i = 0; i < ids.length; i += 500) {
    for (const row of await db
      .selectFrom('conversation_comments')
      .select(['id', 'post_id'])
      .where('id', 'in', ids.slice(i, i + 500))
      .execute())
      owners.set(row.id, row.post_id)
  }
  return owners
}

export async function countPosts(db: Db): Promise<{posts: number; comments: number}> {
  const posts = await db
    .selectFrom('conversation_posts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  const comments = await db
    .selectFrom('conversation_comments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return {posts: Number(posts.n), comments: Number(comments.n)}
}

export async function maxIds(db: Db): Promise<{post: number; comment: number}> {
  const post = await db
    .selectFrom('conversation_posts')
    .select((eb) => eb.fn.max('id').as('m'))
    .executeTakeFirst()
  const comment = await db
    .selectFrom('conversation_comments')
    .select((eb) => eb.fn.max('id').as('m'))
    .executeTakeFirst()
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

/** One page of the keys, oldest first, of one client or of all (list-api-keys, show-client). */
export async function pageApiKeyRows(db: Db, ask: PageAsk & {clientId?: string}): Promise<Page<ApiKeyRow>> {
  let query = db.selectFrom('conversation_api_keys')
  if (ask.clientId !== undefined) query = query.where('client_id', '=', ask.clientId)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows, total: Number(count.n)}
}

/** Deletes a client's keys (remove-client --force); the schema deletes their call log with them. */
export async function deleteClientApiKeys(db: Db, clientId: string): Promise<void> {
  await db.deleteFrom('conversation_api_keys').where('client_id', '=', clientId).execute()
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

export async function insertCall(db: Db, row: {id: string; key_id: string; method: string; query: string; created_at: string}): Promise<void> {
  await db.insertInto('conversation_calls').values(row).execute()
}
