import {AppError} from '../../errors.js'
import {sql} from 'kysely'
import type {ConversationsDb as Db} from './tables.js'
import {inheritContext} from '../../store/context.js'
import {isPostgres} from '../../store/dialect.js'
import type {AnswerFormat} from './format.js'
import * as repo from './repository.js'
import type {Alongside} from './search-postgres.js'
import type {MatchedPost, SearchQuery, SummaryRow} from './search-types.js'
import type {CommentRow} from './tables.js'
import {postView, type Conversation} from './views.js'

/*
 * The reading half of a call: what runs on a search thread's own read-only connection (see
 * search-worker.ts), or on the store's connection for an in-memory store, which no thread can
 * open. The same functions either way. Nothing here writes.
 */

export function summarySearch(db: Db, search: SearchQuery, alongside?: Alongside): Promise<SummaryRow[]> {
  return repo.summaryCounts(db, search, alongside)
}

export interface DataJob {
  search: SearchQuery
  /** The format its pages are written in (a search thread's job names it: search-protocol.ts). */
  format: AnswerFormat
  pageSize: number
  maxConversations: number
}

/** First the counts and how many conversations follow, then the conversations as rendered pages. */
export type DataStep = {kind: 'first'; summary: SummaryRow[]; conversations: number} | {kind: 'page'; text: string}

/**
 * A data call's reading, in one read transaction so the counts and the conversations come from
 * the same snapshot. Refuses a search matching more than `maxConversations` posts before
 * yielding anything. Each page holds `pageSize` conversations with their comments and authors,
 * already in the answer's format; nothing larger than a page is ever held.
 */
export async function* dataSearch(db: Db, job: DataJob, options: {statementTimeoutMs?: number} = {}): AsyncGenerator<DataStep, void, undefined> {
  // PostgreSQL's default (read committed) would take a new snapshot for every statement.
  const begin = db.startTransaction()
  const trx = await (isPostgres(db) ? begin.setIsolationLevel('repeatable read').setAccessMode('read only') : begin).execute()
  // The transaction answers for the same store (its kind decides which SQL the search runs).
  inheritContext(trx, db)
  try {
    if (options.statementTimeoutMs !== undefined) await statementTimeout(trx, options.statementTimeoutMs)
    const summary = await repo.summaryCounts(trx, job.search)
    const matched = await repo.matchedPosts(trx, job.search, job.maxConversations + 1)
    if (matched.length > job.maxConversations) {
      throw new AppError('bad_request', `more than ${job.maxConversations} conversations match; one data answer holds at most ${job.maxConversations}`, {
        details: 'Narrow the window or the terms, and split the search over several calls.',
      })
    }
    yield {kind: 'first', summary, conversations: matched.length}
    for (let i = 0; i < matched.length; i += job.pageSize) {
      const conversations = await conversationPage(trx, job.search.terms, matched.slice(i, i + job.pageSize))
      yield {kind: 'page', text: job.format.page(conversations, i === 0)}
    }
  } finally {
    // Nothing was written: rolling back only ends the snapshot. A store closed under the call
    // has already ended it.
    await trx
      .rollback()
      .execute()
      .catch(() => undefined)
  }
}

/** Posts of one page (already in answer order), each with all its comments, whatever their dates. */
async function conversationPage(trx: Db, terms: readonly string[], page: readonly MatchedPost[]): Promise<Conversation[]> {
  const ids = page.map((p) => p.id)
  const masks = new Map(page.map((p) => [p.id, p.mask]))
  const posts = await repo.postsByIds(trx, ids)
  const comments = await repo.commentsOfPosts(trx, ids)
  const authors = await repo.authorsByIds(trx, [...posts.map((p) => p.author_id), ...comments.map((c) => c.author_id)])
  const byPost = new Map<number, CommentRow[]>()
  for (const comment of comments) {
    const list = byPost.get(comment.post_id) ?? []
    list.push(comment)
    byPost.set(comment.post_id, list)
  }
  return posts.map((post) => {
    const mask = masks.get(post.id)!
    return {matched_terms: terms.filter((_, index) => (mask & (1 << index)) !== 0), post: postView(post, byPost.get(post.id) ?? [], authors)}
  })
}

/** PostgreSQL: every statement of the current transaction is cancelled past `ms`. */
export async function statementTimeout(trx: Db, ms: number): Promise<void> {
  if (isPostgres(trx)) await sql`select set_config('statement_timeout', ${String(ms)}, true)`.execute(trx)
}
