import {XMLBuilder} from 'fast-xml-parser'
import type {AnswerFormat, ErrorBody} from './format.js'
import type {Author, Conversation, DataResult, SummaryResult} from './views.js'

export const XML_TYPE = 'application/vnd.service-v1+xml'

const builder = new XMLBuilder({ignoreAttributes: false, attributeNamePrefix: '@_', cdataPropName: '#cdata', suppressEmptyNode: true, format: false})

const DECLARATION = {'?xml': {'@_version': '1.0', '@_encoding': 'UTF-8'}}

/** Characters XML 1.0 cannot carry at all, even escaped; they are dropped from the XML form. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

export function xmlText(value: string): string {
  return value.replace(NOT_XML, '')
}

/**
 * Free text as character data. A CDATA section cannot contain "]]>", so that sequence is split
 * across two sections, which every XML parser joins back into the original text.
 */
function cdata(value: string): {'#cdata': string | string[]} {
  const pieces = xmlText(value).split(']]>')
  if (pieces.length === 1) return {'#cdata': pieces[0]!}
  return {'#cdata': pieces.map((piece, i) => (i === 0 ? `${piece}]]` : i === pieces.length - 1 ? `>${piece}` : `>${piece}]]`))}
}

/** The XML form: root `call`, the JSON names with hyphens, list elements wrapping one element per item. */
export function toXml(result: SummaryResult | DataResult): string {
  const call: Record<string, unknown> = {
    id: result.id,
    'data-calls-remaining': result.data_calls_remaining,
    query: {
      start: result.query.start,
      end: result.query.end,
      'query-terms': {'query-term': result.query.terms.map(xmlText)},
    },
    summary: {
      'summary-terms': {
        'summary-term': result.summary.terms.map((t) => ({term: xmlText(t.term), matches: t.matches, posts: t.posts, comments: t.comments})),
      },
      uniques: {posts: result.summary.uniques.posts, comments: result.summary.uniques.comments},
    },
  }
  if ('conversations' in result) call.conversations = {conversation: result.conversations.map(conversationXml)}
  return builder.build({...DECLARATION, call})
}

const CALL_END = '</call>'

/**
 * A data answer in pieces, as jsonHead does for JSON: the head (the whole summary answer, opened
 * for `conversations`), the conversations page by page, and the tail. Joined, they are exactly
 * toXml(the whole result). An answer without conversations has the empty element the builder
 * writes for an empty list.
 */
export function xmlHead(result: SummaryResult, conversations: number): string {
  return toXml(result).slice(0, -CALL_END.length) + (conversations === 0 ? '<conversations/>' : '<conversations>')
}

export function xmlConversations(conversations: readonly Conversation[]): string {
  return conversations.map((c) => builder.build({conversation: conversationXml(c)})).join('')
}

export function xmlTail(conversations: number): string {
  return conversations === 0 ? CALL_END : `</conversations>${CALL_END}`
}

function authorXml(a: Author) {
  return {
    id: xmlText(a.id),
    specialty: xmlText(a.specialty),
    'country-of-practice': xmlText(a.country_of_practice),
    zipcode: xmlText(a.zipcode),
    'post-badge': a.post_badge,
    'comment-badge': a.comment_badge,
  }
}

function conversationXml({matched_terms, post}: Conversation) {
  return {
    'matched-terms': {'matched-term': matched_terms.map(xmlText)},
    post: {
      id: post.id,
      author: authorXml(post.author),
      'published-at': post.published_at,
      rating: post.rating,
      iconsult: post.iconsult,
      'solved-at': post.solved_at ?? '',
      title: cdata(post.title),
      content: cdata(post.content),
      comments: {
        comment: post.comments.map((c) => ({
          id: c.id,
          author: authorXml(c.author),
          'published-at': c.published_at,
          content: cdata(c.content),
          'helpful-count': c.helpful_count,
        })),
      },
    },
  }
}

/** An error in XML: root `error` with code, message and details. */
export function errorXml(error: ErrorBody): string {
  return builder.build({...DECLARATION, error: {code: error.code, message: xmlText(error.message), details: xmlText(error.details)}})
}

/** Interface E's XML, for callers that ask for it by its media type. */
export const xmlFormat = {
  name: 'xml',
  label: 'XML',
  mediaType: XML_TYPE,
  summary: toXml,
  head: xmlHead,
  // Every page is a run of whole elements: the first needs nothing before it.
  page: xmlConversations,
  tail: xmlTail,
  error: errorXml,
} as const satisfies AnswerFormat
