import {badRequest} from '../../errors.js'
import {parseInput} from '../../lib/validate.js'
import type {Db} from '../../store/database.js'
import {writeTransaction} from '../../store/db.js'
import * as repo from './repository.js'
import {importDocument, type AuthorInput} from './schema.js'
import type {NewAuthorRow} from './tables.js'

// Loading posts and comments into the store (the import-posts command and the demo seed).

export interface LoadResult {
  posts: number
  comments: number
  authors: number
  replaced_posts: number
}

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

/**
 * Loads a data-call document (or its conversations array). Validated whole before anything is
 * written: one bad field rejects the file and names its path. A post already in the store is
 * replaced with its comments, so loading the same file twice leaves the same state.
 */
export async function importPosts(db: Db, document: unknown): Promise<LoadResult> {
  const parsed = parseInput(importDocument, Array.isArray(document) ? {conversations: document} : document)
  const postIds = new Set<number>()
  const commentIds = new Map<number, number>()
  for (const [index, {post}] of parsed.conversations.entries()) {
    if (postIds.has(post.id)) throw badRequest(`conversations[${index}].post.id: post ${post.id} appears twice in the file`)
    postIds.add(post.id)
    for (const [j, comment] of post.comments.entries()) {
      if (commentIds.has(comment.id)) throw badRequest(`conversations[${index}].post.comments[${j}].id: comment ${comment.id} appears twice in the file`)
      commentIds.set(comment.id, post.id)
    }
  }
  return writeTransaction(db, async (trx) => {
    const owners = await repo.commentOwners(trx, [...commentIds.keys()])
    for (const [commentId, owner] of owners) {
      if (owner !== commentIds.get(commentId) && !postIds.has(owner)) {
        throw badRequest(`comment ${commentId} already belongs to post ${owner}, which this file does not replace`)
      }
    }
    const existing = await repo.postsByIds(trx, [...postIds])
    await repo.deletePosts(
      trx,
      existing.map((p) => p.id),
    )
    const authors = new Map<string, NewAuthorRow>()
    for (const {post} of parsed.conversations) {
      authors.set(post.author.id, authorRow(post.author))
      for (const comment of post.comments) authors.set(comment.author.id, authorRow(comment.author))
    }
    await repo.upsertAuthors(trx, [...authors.values()])
    await repo.insertPosts(
      trx,
      parsed.conversations.map(({post}) => ({
        id: post.id,
        author_id: post.author.id,
        published_at: post.published_at,
        rating: post.rating,
        iconsult: post.iconsult ? 1 : 0,
        solved_at: post.solved_at,
        title: post.title,
        content: post.content,
      })),
    )
    await repo.insertComments(
      trx,
      parsed.conversations.flatMap(({post}) =>
        post.comments.map((c) => ({id: c.id, post_id: post.id, author_id: c.author.id, published_at: c.published_at, content: c.content, helpful_count: c.helpful_count})),
      ),
    )
    return {posts: postIds.size, comments: commentIds.size, authors: authors.size, replaced_posts: existing.length}
  })
}
