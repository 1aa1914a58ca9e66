import {XMLParser} from 'fast-xml-parser'
import {expect} from 'vitest'
import {issueApiKey} from '../../../src/interfaces/conversations/keys.js'
import type {TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'

export const JSON_TYPE = 'application/vnd.service-v1+json'
export const XML_TYPE = 'application/vnd.service-v1+xml'

/** Registers a client with the conversations grant and issues it a key. */
export async function clientWithKey(ctx: TestContext, options: Parameters<typeof issueApiKey>[1] extends infer T ? Partial<T> : never = {}) {
  const client = await registerTestClient(ctx.store, {name: 'Insight Co', grants: ['conversations']}, ctx.clock.now())
  const key = await issueApiKey(ctx.db, {client_id: client.client_id, ...options}, ctx.clock.now())
  return {client, key}
}

/**
 * Whether an answer is the 503 of a search that ran out of its time budget (interface E says
 * "service temporarily unavailable" for every 503; the details tell the budget's apart from a
 * refusal for want of room). Such a search ran, for the whole budget.
 */
export function overBudget(status: number, body: string, budgetSeconds = 10): boolean {
  if (status !== 503) return false
  const details = (JSON.parse(body) as {details?: unknown}).details
  return typeof details === 'string' && details.startsWith(`A search may take at most ${budgetSeconds} s, waiting for a free search thread included`)
}

export function query(terms: string[], start: string, end: string, name = 'terms[]'): string {
  const params = new URLSearchParams()
  for (const term of terms) params.append(name, term)
  params.set('start', start)
  params.set('end', end)
  return params.toString()
}

const LISTS = new Set(['query-term', 'summary-term', 'conversation', 'matched-term', 'comment'])
const parser = new XMLParser({cdataPropName: '#cdata', parseTagValue: false, ignoreDeclaration: true, isArray: (name) => LISTS.has(name), trimValues: false})

const NUMBERS = new Set(['data_calls_remaining', 'matches', 'posts', 'comments', 'helpful_count', 'rating', 'code'])
const BOOLEANS = new Set(['iconsult', 'post_badge', 'comment_badge'])
const WRAPPERS: Record<string, string> = {
  query_terms: 'query_term',
  summary_terms: 'summary_term',
  matched_terms: 'matched_term',
  conversations: 'conversation',
  comments: 'comment',
}
const RENAMED: Record<string, string> = {query_terms: 'terms', summary_terms: 'terms'}

/**
 * Parses an XML answer back and turns it into the JSON form (hyphens to underscores, wrapper
 * elements to arrays, typed leaves), so a test can compare it field for field with the JSON answer.
 */
export function xmlAsJson(xml: string): any {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true)
  const parsed = parser.parse(xml) as Record<string, unknown>
  const [root] = Object.keys(parsed)
  return {root, value: convert(parsed[root!], root!)}
}

function convert(node: unknown, name: string): unknown {
  if (node === '' || node === undefined) {
    if (name === 'solved_at') return null
    return ''
  }
  if (typeof node === 'string') {
    if (NUMBERS.has(name)) return Number(node)
    if (BOOLEANS.has(name)) {
      expect(['true', 'false']).toContain(node)
      return node === 'true'
    }
    return node
  }
  const object = node as Record<string, unknown>
  if ('#cdata' in object) {
    const cdata = object['#cdata']
    return Array.isArray(cdata) ? cdata.join('') : String(cdata)
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(object)) {
    const field = key.replace(/-/g, '_')
    const isList = field in WRAPPERS && !(field === 'comments' && name !== 'post')
    const numericId = field === 'id' && (name === 'post' || name === 'comment')
    out[RENAMED[field] ?? field] = isList ? wrapper(value, WRAPPERS[field]!) : numericId ? Number(value) : convert(value, field)
  }
  return out
}

function wrapper(value: unknown, item: string): unknown[] {
  if (value === '' || value === undefined) return []
  const items = (value as Record<string, unknown>)[item.replace(/_/g, '-')] as unknown[]
  return items.map((entry) => convert(entry, item.replace(/^query_term$|^matched_term$/, 'term')))
}

/** The reference counter for tests: whole-word, case-insensitive, brute force over ASCII text. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? []
}

/** Occurrences of `term` (a word or phrase) in `text`, counted by the reference rules above. */
export function occurrences(text: string, term: string): number {
  const hay = words(text)
  const needle = words(term)
  let n = 0
  for (let i = 0; i + needle.length <= hay.length; i++) if (needle.every((w, j) => hay[i + j] === w)) n++
  return n
}

/** A generated post with its comments, as the property tests make them. */
export interface GeneratedPost {
  title: string
  content: string
  published: string
  comments: {content: string; published: string}[]
}

const TEST_AUTHOR = {id: 'x', specialty: 's', country_of_practice: 'US', zipcode: '1', post_badge: false, comment_badge: false}

/** A generated post as a conversation of the import document, under the ids given. */
export function conversationOf(post: GeneratedPost, id: number, commentId: (index: number) => number) {
  return {
    post: {
      id,
      author: TEST_AUTHOR,
      published_at: post.published,
      rating: 1,
      iconsult: false,
      solved_at: null,
      title: post.title,
      content: post.content,
      comments: post.comments.map((c, j) => ({id: commentId(j), author: TEST_AUTHOR, published_at: c.published, content: c.content, helpful_count: 0})),
    },
  }
}
