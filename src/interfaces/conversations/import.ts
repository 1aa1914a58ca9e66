import {AppError, badRequest} from '../../errors.js'
import {describeZodError, parseInput} from '../../lib/validate.js'
import type {ConversationsDb as Db} from './tables.js'
import {writeTransaction} from '../../store/transactions.js'
import {documentConversations, NotADocument} from './document-stream.js'
import * as repo from './repository.js'
import {conversation, importDocument, type AuthorInput, type PostInput} from './schema.js'
import type {NewAuthorRow} from './tables.js'
import {TermDayCounts} from './term-days.js'

// Loading posts and comments into the store (the import-posts command and the demo seed).

export interface LoadResult {
  posts: number
  comments: number
  authors: number
  replaced_posts: number
}

/**
 * Where an import reads its conversations from: each call gives them again from the start, as raw
 * JSON values (an import reads them twice: once to check them all, once to write them).
 */
export type ConversationSource = () => AsyncIterable<unknown>

/** Posts written (with their comments) between two looks at the statistics' size. */
const CHUNK_POSTS = 1_000
/**
 * Per-day term rows held in memory before they are written (about 100 bytes each): what bounds
 * an import's memory besides one chunk of posts.
 */
const STATISTICS_ROWS = 400_000

function authorRow(author: AuthorInput): NewAuthorRow {
  return {
    id: author.id,
    specialty: author.specialty,
    country_of_practice: author.country_of_practice,
    zipcode: author.zipcode,
    post_badge: author.post_badge ? 1 : 0,
    comment_badge: author.comment_badge ? 1 : 0,
  }
}

/** Conversation `index` checked; a bad one is named by its path in the document. */
function checked(value: unknown, index: number): PostInput {
  const result = conversation.safeParse(value)
  if (result.success) return result.data.post
  for (const issue of result.error.issues) (issue as {path: PropertyKey[]}).path = ['conversations', index, ...issue.path]
  throw new AppError('bad_request', describeZodError(result.error))
}

/** The conversations of a source, checked, numbered from 0. */
async function* checkedPosts(source: ConversationSource): AsyncGenerator<[number, PostInput]> {
  let index = 0
  try {
    for await (const value of source()) {
      yield [index, checked(value, index)]
      index++
    }
  } catch (error) {
    // Valid JSON without a conversations array: the schema says what is missing, as it would of
    // the whole document.
    if (error instanceof NotADocument) parseInput(importDocument, error.value)
    throw error
  }
}

/**
 * Loads a data-call document (or its conversations array). Validated whole before anything is
 * written: one bad field rejects the file and names its path. A post already in the store is
 * replaced with its comments, so loading the same file twice leaves the same state.
 */
export async function importPosts(db: Db, document: unknown): Promise<LoadResult> {
  const list = Array.isArray(document) ? document : (document as {conversations?: unknown} | null)?.conversations
  // Anything but an array of conversations is refused in the schema's own words.
  if (!Array.isArray(list)) parseInput(importDocument, document)
  return importConversations(db, async function* () {
    yield* list as unknown[]
  })
}

/** Text chunks as the document stream takes them: a string's in pieces, so each is scanned alike. */
export function textChunks(text: string, size = 1 << 20): ConversationSource {
  return () =>
    documentConversations(
      (async function* () {
        for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size)
      })(),
    )
}

/**
 * Loads conversations from a source read twice. The first pass checks every conversation (its
 * fields, and that no post or comment id appears twice) and keeps only ids, so nothing is written
 * unless the whole document is valid. The second pass writes, in one transaction: posts the
 * document replaces are deleted first (a comment moving between two posts of the document then
 * never meets its old row), then the conversations are written a chunk at a time, their per-day
 * term statistics added up in memory and written in key order whenever enough are held. Memory
 * holds the ids, the statistics not yet written and one chunk, never the document.
 */
export async function importConversations(db: Db, source: ConversationSource): Promise<LoadResult> {
  return writeConversations(db, source, await checkConversations(source))
}

/** What the first pass of an import keeps: the document's ids, and its authors' for the count. */
export interface CheckedDocument {
  postIds: Set<number>
  commentIds: Set<number>
  authorIds: Set<string>
}

/** The first pass of importConversations: every conversation checked, nothing written. */
export async function checkConversations(source: ConversationSource): Promise<CheckedDocument> {
  const postIds = new Set<number>()
  const commentIds = new Set<number>()
  const authorIds = new Set<string>()
  for await (const [index, post] of checkedPosts(source)) {
    if (postIds.has(post.id)) throw badRequest(`conversations[${index}].post.id: post ${post.id} appears twice in the file`)
    postIds.add(post.id)
    authorIds.add(post.author.id)
    for (const [j, comment] of post.comments.entries()) {
      if (commentIds.has(comment.id)) throw badRequest(`conversations[${index}].post.comments[${j}].id: comment ${comment.id} appears twice in the file`)
      commentIds.add(comment.id)
      authorIds.add(comment.author.id)
    }
  }
  return {postIds, commentIds, authorIds}
}

/** The second pass of importConversations: the checked document written in one transaction. */
export async function writeConversations(db: Db, source: ConversationSource, document: CheckedDocument): Promise<LoadResult> {
  const {postIds, commentIds, authorIds} = document
  return writeTransaction(db, async (trx) => {
    const stored = await repo.maxIds(trx)
    // A fresh store holds nothing to check or replace.
    if (stored.comment > 0)
      await checkCommentOwners(
        trx,
        [...commentIds].filter((id) => id <= stored.comment),
        postIds,
      )
    const replaced =
      stored.post > 0
        ? await deleteReplacedPosts(
            trx,
            [...postIds].filter((id) => id <= stored.post),
          )
        : 0
    const counts = new TermDayCounts()
    let chunk: PostInput[] = []
    for await (const [, post] of checkedPosts(source)) {
      chunk.push(post)
      if (chunk.length < CHUNK_POSTS) continue
      await writeChunk(trx, chunk, counts)
      chunk = []
    }
    if (chunk.length > 0) await writeChunk(trx, chunk, counts)
    await counts.write(trx, 1)
    return {posts: postIds.size, comments: commentIds.size, authors: authorIds.size, replaced_posts: replaced}
  })
}

/** Refuses the file if a stored comment it names belongs to a post it does not replace (a comment may move between the posts it replaces). */
async function checkCommentOwners(trx: Db, stored: number[], postIds: ReadonlySet<number>): Promise<void> {
  for (let i = 0; i < stored.length; i += 10_000) {
    for (const [commentId, owner] of await repo.commentOwners(trx, stored.slice(i, i + 10_000))) {
      if (!postIds.has(owner)) throw badRequest(`comment ${commentId} already belongs to post ${owner}, which this file does not replace`)
    }
  }
}

/** Deletes the stored posts the file replaces (with their comments); answers how many there were. */
async function deleteReplacedPosts(trx: Db, stored: number[]): Promise<number> {
  let replaced = 0
  for (let i = 0; i < stored.length; i += 10_000) {
    const existing = await repo.postsByIds(trx, stored.slice(i, i + 10_000))
    replaced += existing.length
    await repo.deletePosts(
      trx,
      existing.map((p) => p.id),
    )
  }
  return replaced
}

/** Writes one chunk of posts, their comments and their authors; the term-day counts go out once they are large. */
async function writeChunk(trx: Db, chunk: readonly PostInput[], counts: TermDayCounts): Promise<void> {
  const authors = new Map<string, NewAuthorRow>()
  for (const post of chunk) {
    authors.set(post.author.id, authorRow(post.author))
    for (const comment of post.comments) authors.set(comment.author.id, authorRow(comment.author))
  }
  await repo.upsertAuthors(trx, [...authors.values()])
  await repo.insertPosts(
    trx,
    chunk.map((post) => ({
      id: post.id,
      author_id: post.author.id,
      published_at: post.published_at,
      rating: post.rating,
      iconsult: post.iconsult ? 1 : 0,
      solved_at: post.solved_at,
      title: post.title,
      content: post.content,
    })),
    counts,
  )
  await repo.insertComments(
    trx,
    chunk.flatMap((post) =>
      post.comments.map((c) => ({id: c.id, post_id: post.id, author_id: c.author.id, published_at: c.published_at, content: c.content, helpful_count: c.helpful_count})),
    ),
    counts,
  )
  if (counts.size >= STATISTICS_ROWS) await counts.write(trx, 1)
}
