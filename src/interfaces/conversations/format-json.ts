import type {AnswerFormat, ErrorBody} from './format.js'
import type {Author, Conversation, DataResult, SummaryResult} from './views.js'

export const JSON_TYPE = 'application/vnd.service-v1+json'

/**
 * The JSON form, field for field as the spec names it. Ratings are written as numbers made from
 * their exact decimal text (at most four decimal places, so the number round-trips exactly).
 */
export function toJson(result: SummaryResult | DataResult): unknown {
  const base = {
    id: result.id,
    data_calls_remaining: result.data_calls_remaining,
    query: {start: result.query.start, end: result.query.end, terms: result.query.terms},
    summary: {
      terms: result.summary.terms.map((t) => ({term: t.term, matches: t.matches, posts: t.posts, comments: t.comments})),
      uniques: {posts: result.summary.uniques.posts, comments: result.summary.uniques.comments},
    },
  }
  if (!('conversations' in result)) return base
  return {...base, conversations: result.conversations.map(conversationJson)}
}

/**
 * A data answer in pieces, written as its conversations are read: the head (everything up to the
 * opening bracket of `conversations`), the conversations page by page, and the tail. Joined, they
 * are exactly JSON.stringify(toJson(the whole result)).
 */
export function jsonHead(result: SummaryResult): string {
  return `${JSON.stringify(toJson(result)).slice(0, -1)},"conversations":[`
}

/** One page of conversations; every page but the first starts with the comma after the last. */
export function jsonConversations(conversations: readonly Conversation[], first: boolean): string {
  const text = conversations.map((c) => JSON.stringify(conversationJson(c))).join(',')
  return first || text === '' ? text : `,${text}`
}

export const JSON_TAIL = ']}'

/** Interface E's JSON: the spec's own form, and the one a caller gets without asking (formats.ts lists it first). */
export const jsonFormat = {
  name: 'json',
  label: 'JSON',
  mediaType: JSON_TYPE,
  summary: (result: SummaryResult) => JSON.stringify(toJson(result)),
  head: jsonHead,
  page: jsonConversations,
  tail: () => JSON_TAIL,
  error: (body: ErrorBody) => JSON.stringify(body),
} as const satisfies AnswerFormat

function authorJson(a: Author) {
  return {id: a.id, specialty: a.specialty, country_of_practice: a.country_of_practice, zipcode: a.zipcode, post_badge: a.post_badge, comment_badge: a.comment_badge}
}

function conversationJson({matched_terms, post}: Conversation) {
  return {
    matched_terms,
    post: {
      id: post.id,
      author: authorJson(post.author),
      published_at: post.published_at,
      rating: Number(post.rating),
      iconsult: post.iconsult,
      solved_at: post.solved_at,
      title: post.title,
      content: post.content,
      comments: post.comments.map((c) => ({
        id: c.id,
        author: authorJson(c.author),
        published_at: c.published_at,
        content: c.content,
        helpful_count: c.helpful_count,
      })),
    },
  }
}
