import type {SummaryRow} from './search-types.js'
import type {AuthorRow, CommentRow, PostRow} from './tables.js'

// Results, as the spec names their fields. Serialisers (JSON, XML) only rename and render. Kept
// apart from the service so that a search thread can build them without the rest of it.

export interface Author {
  id: string
  specialty: string
  country_of_practice: string
  zipcode: string
  post_badge: boolean
  comment_badge: boolean
}

export interface Comment {
  id: number
  author: Author
  published_at: string
  content: string
  helpful_count: number
}

export interface Post {
  id: number
  author: Author
  published_at: string
  /** Exact decimal text; the JSON form writes it as a number made from this text. */
  rating: string
  iconsult: boolean
  solved_at: string | null
  title: string
  content: string
  comments: Comment[]
}

export interface Conversation {
  matched_terms: string[]
  post: Post
}

export interface TermSummary {
  term: string
  matches: number
  posts: number
  comments: number
}

export interface SummaryResult {
  id: string
  data_calls_remaining: number
  query: {start: string; end: string; terms: string[]}
  summary: {terms: TermSummary[]; uniques: {posts: number; comments: number}}
}

export interface DataResult extends SummaryResult {
  conversations: Conversation[]
}

/** A datetime as the spec writes it: whole seconds with Z, milliseconds only when there are some. */
export function isoSeconds(stored: string): string {
  return stored.replace(/\.000Z$/, 'Z')
}

/** Comment timestamps have the fixed form YYYY-MM-DDTHH:MM:SSZ. */
function isoWholeSeconds(stored: string): string {
  return `${stored.slice(0, 19)}Z`
}

export function summarize(terms: readonly string[], rows: readonly SummaryRow[]): SummaryResult['summary'] {
  const out: TermSummary[] = terms.map((term) => ({term, matches: 0, posts: 0, comments: 0}))
  const uniques = {posts: 0, comments: 0}
  for (const row of rows) {
    if (row.t === -1) {
      uniques[row.kind === 'post' ? 'posts' : 'comments'] = Number(row.docs)
      continue
    }
    const entry = out[row.t]!
    entry.matches += Number(row.matches)
    entry[row.kind === 'post' ? 'posts' : 'comments'] = Number(row.docs)
  }
  return {terms: out, uniques}
}

function authorView(row: AuthorRow | undefined, id: string): Author {
  if (!row) return {id, specialty: '', country_of_practice: '', zipcode: '', post_badge: false, comment_badge: false}
  return {
    id: row.id,
    specialty: row.specialty,
    country_of_practice: row.country_of_practice,
    zipcode: row.zipcode,
    post_badge: row.post_badge === 1,
    comment_badge: row.comment_badge === 1,
  }
}

export function postView(post: PostRow, comments: readonly CommentRow[], authors: Map<string, AuthorRow>): Post {
  return {
    id: post.id,
    author: authorView(authors.get(post.author_id), post.author_id),
    published_at: isoSeconds(post.published_at),
    rating: post.rating,
    iconsult: post.iconsult === 1,
    solved_at: post.solved_at === null ? null : isoSeconds(post.solved_at),
    title: post.title,
    content: post.content,
    comments: comments.map((c) => ({
      id: c.id,
      author: authorView(authors.get(c.author_id), c.author_id),
      published_at: isoWholeSeconds(c.published_at),
      content: c.content,
      helpful_count: c.helpful_count,
    })),
  }
}
