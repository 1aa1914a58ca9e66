import type {Insertable, Kysely, Selectable} from 'kysely'
import type {GrantTables} from '../../grants/tables.js'
import type {RegistryTables} from '../../registry/tables.js'
import type {JsonColumn} from '../../store/json.js'
import type {Method} from './schema.js'

/** A community member as conversation data shows them; ids are opaque strings. */
export interface ConversationAuthorTable {
  id: string
  specialty: string
  country_of_practice: string
  zipcode: string
  post_badge: number
  comment_badge: number
}

/** Timestamps are ISO 8601 UTC with milliseconds, so text order is time order. */
export interface ConversationPostTable {
  id: number
  author_id: string
  published_at: string
  /** Average stars as exact decimal text. */
  rating: string
  iconsult: number
  solved_at: string | null
  title: string
  content: string
}

export interface ConversationCommentTable {
  id: number
  post_id: number
  author_id: string
  published_at: string
  content: string
  helpful_count: number
}

/** An interface E API key; only the SHA-256 of the key itself is kept. */
export interface ConversationApiKeyTable {
  id: string
  key_hash: string
  client_id: string
  /** The methods the key may call: summary, data. */
  methods: JsonColumn<Method[]>
  /** Data calls per period (or in all, when the allowance never renews). */
  data_call_allowance: number
  data_calls_used: number
  /** Length of an allowance period in days; null when the allowance never renews. */
  renew_days: number | null
  period_started_at: string
  subscription_ends_at: string | null
  revoked_at: string | null
  created_at: string
  updated_at: string
}

/** One row per answered call, under the id the answer carried. */
export interface ConversationCallTable {
  id: string
  key_id: string
  method: string
  query: string
  created_at: string
}

/** Per-day statistics of one- and two-token terms (term-days.ts); kind 0 is posts, 1 comments. */
export interface ConversationTermDayTable {
  term: string
  kind: number
  day: number
  docs: number
  matches: number
}

export interface ConversationTables {
  conversation_authors: ConversationAuthorTable
  conversation_posts: ConversationPostTable
  conversation_comments: ConversationCommentTable
  conversation_api_keys: ConversationApiKeyTable
  conversation_calls: ConversationCallTable
  conversation_term_days: ConversationTermDayTable
}

export type AuthorRow = Selectable<ConversationAuthorTable>
export type PostRow = Selectable<ConversationPostTable>
export type CommentRow = Selectable<ConversationCommentTable>
export type ApiKeyRow = Selectable<ConversationApiKeyTable>
export type NewAuthorRow = Insertable<ConversationAuthorTable>
export type NewPostRow = Insertable<ConversationPostTable>
export type NewCommentRow = Insertable<ConversationCommentTable>
export type NewApiKeyRow = Insertable<ConversationApiKeyTable>

/** What this layer's queries see: interface E's tables and those of the registry and grants below it. */
export type ConversationsView = ConversationTables & RegistryTables & GrantTables
export type ConversationsDb = Kysely<ConversationsView>
