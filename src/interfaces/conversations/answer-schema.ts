import {z} from 'zod'
import {useOpenApi} from '../../lib/zod.js'
import type {AnswerFormat} from './format.js'

useOpenApi()

/*
 * What an answer of interface E looks like, for /openapi.json: the JSON document that
 * format-json.ts writes and the XML document that format-xml.ts writes. The XML schemas name
 * their elements as the XML form does (hyphens, `call` at the root, one element per list item
 * inside a wrapper); every value there is element text. They live here rather than beside their
 * formats because the search threads render with the formats and have no use for zod.
 */

const dateTime = (description: string) => z.iso.datetime().openapi({description})

// JSON ------------------------------------------------------------------------------------------

const author = z
  .object({
    id: z.string(),
    specialty: z.string(),
    country_of_practice: z.string(),
    zipcode: z.string(),
    post_badge: z.boolean(),
    comment_badge: z.boolean(),
  })
  .openapi('ConversationAuthor')

const comment = z
  .object({
    id: z.number().int(),
    author,
    published_at: dateTime('Whole seconds, always in the form YYYY-MM-DDTHH:MM:SSZ'),
    content: z.string(),
    helpful_count: z.number().int().nonnegative(),
  })
  .openapi('ConversationComment')

const post = z
  .object({
    id: z.number().int().positive(),
    author,
    published_at: dateTime('UTC; milliseconds only when there are some'),
    rating: z.number().min(0).max(5).openapi({description: 'At most four decimal places'}),
    iconsult: z.boolean(),
    solved_at: dateTime('When the iConsult was solved; null when it is not solved or not an iConsult').nullable(),
    title: z.string(),
    content: z.string(),
    comments: z.array(comment).openapi({description: 'Every comment of the post, whether it matched or not'}),
  })
  .openapi('ConversationPost')

const conversation = z
  .object({
    matched_terms: z.array(z.string()).openapi({description: 'The query terms found in the post or its comments in the window'}),
    post,
  })
  .openapi('Conversation')

const summaryFields = {
  id: z.string().openapi({description: 'A new id for every call, under which the store records it'}),
  data_calls_remaining: z.number().int().nonnegative(),
  query: z.object({start: dateTime('Window start, as UTC'), end: dateTime('Window end, as UTC'), terms: z.array(z.string())}),
  summary: z.object({
    terms: z.array(
      z.object({
        term: z.string(),
        matches: z.number().int().nonnegative().openapi({description: 'Occurrences in posts and comments of the window'}),
        posts: z.number().int().nonnegative(),
        comments: z.number().int().nonnegative(),
      }),
    ),
    uniques: z.object({posts: z.number().int().nonnegative(), comments: z.number().int().nonnegative()}),
  }),
}

export const summaryAnswer = z.object(summaryFields).openapi('ConversationSummary')

export const dataAnswer = z
  .object({...summaryFields, conversations: z.array(conversation)})
  .openapi('ConversationData', {description: 'The summary answer with every matching conversation'})

// XML -------------------------------------------------------------------------------------------

/** A list as the XML form writes it: a wrapper element holding one `item` element per entry. */
const xmlList = <T extends z.ZodType>(item: T, itemName: string) => z.array(item.openapi({xml: {name: itemName}})).openapi({xml: {wrapped: true}})

const text = (description?: string) => (description ? z.string().openapi({description}) : z.string())

const xmlAuthor = z.object({
  id: z.string(),
  specialty: z.string(),
  'country-of-practice': z.string(),
  zipcode: z.string(),
  'post-badge': z.boolean(),
  'comment-badge': z.boolean(),
})

const xmlComment = z.object({
  id: z.number().int(),
  author: xmlAuthor,
  'published-at': z.iso.datetime(),
  content: text('Character data (CDATA); "]]>" is split across two sections'),
  'helpful-count': z.number().int(),
})

const xmlConversation = z.object({
  'matched-terms': xmlList(z.string(), 'matched-term'),
  post: z.object({
    id: z.number().int(),
    author: xmlAuthor,
    'published-at': z.iso.datetime(),
    rating: z.number().openapi({description: 'The exact decimal text, at most four decimal places'}),
    iconsult: z.boolean(),
    'solved-at': text('Empty when the post is not solved'),
    title: text('Character data (CDATA)'),
    content: text('Character data (CDATA); "]]>" is split across two sections'),
    comments: xmlList(xmlComment, 'comment'),
  }),
})

const xmlSummaryFields = {
  id: z.string(),
  'data-calls-remaining': z.number().int(),
  query: z.object({start: z.iso.datetime(), end: z.iso.datetime(), 'query-terms': xmlList(z.string(), 'query-term')}),
  summary: z.object({
    'summary-terms': xmlList(z.object({term: z.string(), matches: z.number().int(), posts: z.number().int(), comments: z.number().int()}), 'summary-term'),
    uniques: z.object({posts: z.number().int(), comments: z.number().int()}),
  }),
}

const XML_NOTE = 'The same answer in XML: root element `call`, the JSON names with hyphens, and characters XML 1.0 cannot carry dropped from text.'

export const summaryAnswerXml = z.object(xmlSummaryFields).openapi('ConversationSummaryXml', {description: XML_NOTE, xml: {name: 'call'}})

export const dataAnswerXml = z
  .object({...xmlSummaryFields, conversations: xmlList(xmlConversation, 'conversation')})
  .openapi('ConversationDataXml', {description: `${XML_NOTE} No conversations: an empty \`conversations\` element.`, xml: {name: 'call'}})

/** Interface E's error body in JSON (in XML: root `error`, the same three elements). */
export const errorAnswer = z.object({code: z.number().int(), message: z.string(), details: z.string()}).openapi('ConversationError')

// By format ------------------------------------------------------------------------------------

/** The answers /openapi.json describes for each format. */
export type AnswerKind = 'summary' | 'data' | 'error'

/** The schemas written out above, by format name; anything else is described as text. */
const DESCRIBED: Record<string, Partial<Record<AnswerKind, z.ZodType>>> = {
  json: {summary: summaryAnswer, data: dataAnswer, error: errorAnswer},
  xml: {summary: summaryAnswerXml, data: dataAnswerXml},
}

/**
 * An answer's schema in one format: the one written out above, or, for a format without one
 * (XML's error body, a format added without a schema here), "the same document" as text.
 */
export function answerSchema(format: AnswerFormat, kind: AnswerKind): z.ZodType {
  return DESCRIBED[format.name]?.[kind] ?? z.string().openapi({description: `The same document in ${format.label}`})
}
