import {AppError, badRequest, notFound} from '../../errors.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {newUuid, randomToken} from '../../lib/ids.js'
import {parseInput} from '../../lib/validate.js'
import {getClientRow, hasGrant} from '../../registry/service.js'
import {assertNotLocked, keySubject, recordFailure} from '../../registry/throttle.js'
import type {Db} from '../../store/database.js'
import {readTransaction, writeTransaction} from '../../store/db.js'
import {JSON_TAIL, jsonHead} from './format-json.js'
import {xmlHead, xmlTail} from './format-xml.js'
import type {ConversationLimits} from './limits.js'
import type {Format} from './negotiation.js'
import type {RateLimiter} from './rate-limit.js'
import * as repo from './repository.js'
import type {SearchStream, Searcher} from './search-pool.js'
import {isoSeconds, summarize, type SummaryResult} from './views.js'
import {apiKeyPatchSchema, importDocument, isIsoDateTime, METHODS, newApiKeySchema, type ApiKeyPatch, type AuthorInput, type Method, type NewApiKeyInput} from './schema.js'
import type {ApiKeyRow, NewAuthorRow} from './tables.js'

export type {Author, Comment, Conversation, DataResult, Post, SummaryResult, TermSummary} from './views.js'
export {isoSeconds} from './views.js'

// ---------------------------------------------------------------------------------------------
// API keys

export interface ApiKeyView {
  id: string
  client_id: string
  methods: Method[]
  data_call_allowance: number
  data_calls_remaining: number
  renew_days: number | null
  /** When the allowance is next restored in full; null when it never renews. */
  renews_at: string | null
  subscription_ends_at: string | null
  revoked: boolean
  created_at: string
  updated_at: string
}

const DAY_MS = 86_400_000

/** The allowance period `now` falls in, and the calls already used in it. */
function currentPeriod(row: ApiKeyRow, now: Date): {started: Date; used: number; renewsAt: Date | null} {
  const started = new Date(row.period_started_at)
  if (row.renew_days === null) return {started, used: row.data_calls_used, renewsAt: null}
  const length = row.renew_days * DAY_MS
  const elapsed = Math.floor((now.getTime() - started.getTime()) / length)
  if (elapsed <= 0) return {started, used: row.data_calls_used, renewsAt: new Date(started.getTime() + length)}
  const current = new Date(started.getTime() + elapsed * length)
  return {started: current, used: 0, renewsAt: new Date(current.getTime() + length)}
}

export function apiKeyView(row: ApiKeyRow, now: Date): ApiKeyView {
  const period = currentPeriod(row, now)
  return {
    id: row.id,
    client_id: row.client_id,
    methods: JSON.parse(row.methods) as Method[],
    data_call_allowance: row.data_call_allowance,
    data_calls_remaining: Math.max(0, row.data_call_allowance - period.used),
    renew_days: row.renew_days,
    renews_at: period.renewsAt ? iso(period.renewsAt) : null,
    subscription_ends_at: row.subscription_ends_at,
    revoked: row.revoked_at !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/** Issues a key to a client holding the conversations grant. The key is returned only here. */
export async function issueApiKey(db: Db, input: NewApiKeyInput, now: Date, fixedKey?: string): Promise<ApiKeyView & {api_key: string}> {
  const parsed = parseInput(newApiKeySchema, input)
  const client = await getClientRow(db, parsed.client_id)
  if (!hasGrant(client, 'conversations')) throw badRequest(`client "${client.id}" does not hold the conversations grant (update-client ${client.id} --grant …,conversations)`)
  const apiKey = fixedKey ?? `mpk_${randomToken(32)}`
  const stamp = iso(now)
  const row = {
    id: `key_${newUuid().replace(/-/g, '').slice(0, 20)}`,
    key_hash: sha256(apiKey),
    client_id: client.id,
    methods: JSON.stringify(METHODS.filter((m) => parsed.methods.includes(m))),
    data_call_allowance: parsed.data_calls,
    data_calls_used: 0,
    renew_days: parsed.renew_days,
    period_started_at: stamp,
    subscription_ends_at: parsed.subscription_ends,
    revoked_at: null,
    created_at: stamp,
    updated_at: stamp,
  }
  await repo.insertApiKey(db, row)
  return {api_key: apiKey, ...apiKeyView(row, now)}
}

/** Finds a key by its id (key_…) or by the key itself. */
export async function findApiKeyRow(db: Db, keyOrId: string): Promise<ApiKeyRow> {
  const row = /^key_[0-9a-f]{20}$/.test(keyOrId) ? await repo.findApiKey(db, keyOrId) : await repo.findApiKeyByHash(db, sha256(keyOrId))
  if (!row) throw notFound('no API key matches that key or id')
  return row
}

/**
 * Changes a key's settings. Setting `data_calls` starts a fresh allowance of that many calls,
 * beginning now.
 */
export async function updateApiKey(db: Db, keyOrId: string, input: ApiKeyPatch, now: Date): Promise<ApiKeyView> {
  const patch = parseInput(apiKeyPatchSchema, input)
  return writeTransaction(db, async (trx) => {
    const row = await findApiKeyRow(trx, keyOrId)
    const stamp = iso(now)
    const change: Parameters<typeof repo.updateApiKeyRow>[2] = {updated_at: stamp}
    if (patch.methods) change.methods = JSON.stringify(METHODS.filter((m) => patch.methods!.includes(m)))
    if (patch.data_calls !== undefined) {
      change.data_call_allowance = patch.data_calls
      change.data_calls_used = 0
      change.period_started_at = stamp
    }
    if (patch.renew_days !== undefined) change.renew_days = patch.renew_days
    if (patch.subscription_ends !== undefined) change.subscription_ends_at = patch.subscription_ends
    if (patch.revoke !== undefined) change.revoked_at = patch.revoke ? (row.revoked_at ?? stamp) : null
    await repo.updateApiKeyRow(trx, row.id, change)
    return apiKeyView((await repo.findApiKey(trx, row.id))!, now)
  })
}

/** Checks a presented key for one method: 401, 402 and 403 as the spec's error table names them. */
async function authorize(trx: Db, presented: string | undefined, method: Method, now: Date): Promise<ApiKeyRow> {
  if (presented === undefined || presented.trim() === '') {
    throw new AppError('unauthorized', 'an API key is required', {details: 'Send the key in the X-Service-Conversation-API-Key header.'})
  }
  // Keys carry 256 random bits, so looking up their SHA-256 leaks nothing a timing attack could use.
  const row = await repo.findApiKeyByHash(trx, sha256(presented.trim()))
  if (!row) throw new AppError('unauthorized', 'the API key is not valid', {details: 'Check the X-Service-Conversation-API-Key header.'})
  if (row.revoked_at !== null) throw new AppError('unauthorized', 'the API key has been revoked', {details: `Revoked at ${row.revoked_at}.`})
  const client = await getClientRow(trx, row.client_id)
  if (client.expired_at !== null) throw new AppError('unauthorized', "the API key's client account has expired", {details: `Expired at ${client.expired_at}.`})
  if (!hasGrant(client, 'conversations')) throw new AppError('forbidden', "the API key's client may not use the conversation interface", {details: 'The client no longer holds the conversations grant.'})
  if (row.subscription_ends_at !== null && now.getTime() >= new Date(row.subscription_ends_at).getTime()) {
    throw new AppError('payment_required', 'the subscription has lapsed', {details: `The subscription of this API key ended at ${isoSeconds(row.subscription_ends_at)}.`})
  }
  const methods = JSON.parse(row.methods) as Method[]
  if (!methods.includes(method)) {
    throw new AppError('forbidden', `this API key may not call ${method}`, {details: `Allowed methods for this key: ${methods.join(', ')}.`})
  }
  return row
}

// ---------------------------------------------------------------------------------------------
// Calls

/** What a caller sent, before any checking. */
export interface CallRequest {
  method: Method
  apiKey: string | undefined
  terms: readonly string[]
  start: string | undefined
  end: string | undefined
  /** The answer's format; a data answer's pages are rendered where they are read. */
  format: Format
  /** A HEAD request: checked like a GET, but it neither spends the allowance nor searches. */
  headOnly?: boolean
  /** Where the call came from, for the failed-attempt throttle. */
  address?: string | undefined
}

/** What a call runs with besides the store: the limits, the summary calls' buckets, and where searches run. */
export interface CallContext {
  limits: ConversationLimits
  summaryRate: RateLimiter
  searcher: Searcher
}

/** A summary answer, whole; or a data answer as its head and a generator of its bytes (head included). */
export type CallAnswer = {kind: 'summary'; result: SummaryResult} | {kind: 'data'; result: SummaryResult; conversations: number; body: () => AsyncGenerator<Uint8Array, void, undefined>}

interface ParsedQuery {
  terms: string[]
  start: string
  end: string
}

function parseQuery(request: CallRequest, limits: ConversationLimits): ParsedQuery {
  const details = 'Send terms[] once per term, start and end as ISO 8601 UTC datetimes, e.g. ?terms[]=sepsis&start=2024-01-01T00:00:00Z&end=2024-12-31T23:59:59Z'
  if (request.terms.length === 0) throw new AppError('bad_request', 'terms[] is required', {details})
  const terms: string[] = []
  for (const [index, raw] of request.terms.entries()) {
    const term = raw.trim()
    if (term === '') throw new AppError('bad_request', `terms[${index}] is empty`, {details})
    // SQLite ends a query string at NUL, so such a term could never be searched as sent.
    if (term.includes('\u0000')) throw new AppError('bad_request', `terms[${index}] contains a NUL character`, {details})
    if (term.length > limits.maxTermLength) throw new AppError('bad_request', `terms[${index}] is longer than ${limits.maxTermLength} characters`, {details})
    if (!terms.includes(term)) terms.push(term)
  }
  if (terms.length > limits.maxTerms) throw new AppError('bad_request', `at most ${limits.maxTerms} distinct terms may be sent in one call`, {details})
  const instant = (name: 'start' | 'end', value: string | undefined): string => {
    if (value === undefined || value.trim() === '') throw new AppError('bad_request', `${name} is required`, {details})
    if (!isIsoDateTime(value.trim())) throw new AppError('bad_request', `${name} is not an ISO 8601 UTC datetime: ${JSON.stringify(value.slice(0, 64))}`, {details})
    return new Date(value.trim()).toISOString()
  }
  const start = instant('start', request.start)
  const end = instant('end', request.end)
  if (start > end) throw new AppError('bad_request', 'start is after end', {details: `The window ${isoSeconds(start)} .. ${isoSeconds(end)} is empty; swap start and end.`})
  if (new Date(end).getTime() - new Date(start).getTime() > limits.maxWindowDays * DAY_MS) {
    throw new AppError('bad_request', `the window is longer than ${limits.maxWindowDays} days`, {
      details: `The window ${isoSeconds(start)} .. ${isoSeconds(end)} is too long; split it into windows of at most ${limits.maxWindowDays} days.`,
    })
  }
  return {terms, start, end}
}

async function termTokens(trx: Db, terms: readonly string[], limits: ConversationLimits): Promise<string[][]> {
  const tokens = await repo.tokenizeTerms(trx, terms)
  tokens.forEach((list, index) => {
    if (list.length === 0) throw new AppError('bad_request', `terms[${index}] has no letters or digits to search for`, {details: `Term ${JSON.stringify(terms[index])}: punctuation alone never matches a word.`})
    if (list.length > limits.maxTermWords) throw new AppError('bad_request', `terms[${index}] has more than ${limits.maxTermWords} words`, {details: 'Shorten the phrase.'})
  })
  return tokens
}

const UTF8 = new TextEncoder()

/**
 * One call of interface E, checked in the order a caller would fix things: key (401, 402, 403),
 * query (400), then the summary rate or the data allowance (429). A data call spends its
 * allowance in a short write transaction (BEGIN IMMEDIATE), so two calls racing for the last one
 * cannot both win. The search itself runs on the store's search threads (search-pool.ts), in a
 * read transaction of their own that holds no write lock, within the time budget. A data call
 * whose search fails, before or while its answer streams, gets its call back; one whose reader
 * goes away has spent it.
 */
export async function conversationCall(db: Db, request: CallRequest, now: Date, context: CallContext): Promise<CallAnswer> {
  const {limits} = context
  const arrived = performance.now()
  const spends = request.method === 'data' && !request.headOnly
  // Keys carry 256 random bits, so guessing one is hopeless; an address that keeps presenting
  // wrong keys is slowed all the same, as sign-in and client secrets are (registry/throttle.ts).
  const subjects = {account: keySubject(request.apiKey?.trim() ?? ''), address: request.address}
  await assertNotLocked(db, subjects, now)
  const checked = await (spends ? writeTransaction : readTransaction)(db, async (trx) => {
    const key = await authorize(trx, request.apiKey, request.method, now)
    const query = parseQuery(request, limits)
    const period = currentPeriod(key, now)
    let remaining = Math.max(0, key.data_call_allowance - period.used)
    if (request.method === 'data') {
      if (remaining === 0) {
        const headers: Record<string, string> = {}
        if (period.renewsAt) headers['Retry-After'] = String(Math.max(1, Math.ceil((period.renewsAt.getTime() - now.getTime()) / 1000)))
        throw new AppError('too_many_requests', 'no data calls are left on this API key', {
          headers,
          details: period.renewsAt ? `The allowance of ${key.data_call_allowance} data calls renews at ${isoSeconds(iso(period.renewsAt))}.` : 'Ask for a larger allowance.',
        })
      }
      if (spends) {
        await repo.updateApiKeyRow(trx, key.id, {data_calls_used: period.used + 1, period_started_at: iso(period.started)})
        remaining -= 1
      }
    }
    const tokens = request.headOnly ? [] : await termTokens(trx, query.terms, limits)
    return {key, query, remaining, tokens, periodStarted: iso(period.started)}
  }).catch(async (error: unknown) => {
    // Counted outside the call's transaction, which rolls back with the error.
    if (error instanceof AppError && error.code === 'unauthorized' && request.apiKey?.trim()) await recordFailure(db, subjects, now)
    throw error
  })

  const {key, query, remaining, tokens} = checked
  const echo = {start: isoSeconds(query.start), end: isoSeconds(query.end), terms: query.terms}
  const id = newUuid()
  if (request.headOnly) {
    const empty = {id, data_calls_remaining: remaining, query: echo, summary: {terms: [], uniques: {posts: 0, comments: 0}}}
    return {kind: 'summary', result: empty}
  }
  if (request.method === 'summary') {
    const wait = context.summaryRate.take(key.id, now)
    if (wait !== undefined) {
      throw new AppError('too_many_requests', 'too many summary calls with this API key', {
        headers: {'Retry-After': String(wait)},
        details: `A key may make ${limits.summaryBurst} summary calls at once and ${limits.summaryPerSecond} more per second; try again in ${wait} s.`,
      })
    }
  }
  const search = {terms: query.terms, tokens, start: query.start, end: query.end}
  const timing = {deadline: arrived + limits.searchBudgetMs, budgetMs: limits.searchBudgetMs, stallMs: limits.stallMs}
  const record = () => repo.insertCall(db, {id, key_id: key.id, method: request.method, query: JSON.stringify(echo), created_at: iso(now)})
  if (request.method === 'summary') {
    const result: SummaryResult = {id, data_calls_remaining: remaining, query: echo, summary: summarize(query.terms, await context.searcher.summary(search, timing))}
    await record()
    return {kind: 'summary', result}
  }

  const refund = () => repo.refundDataCall(db, key.id, checked.periodStarted).catch(() => undefined)
  let stream: SearchStream
  try {
    stream = await context.searcher.data({search, format: request.format, pageSize: limits.pageSize, maxConversations: limits.maxConversations}, timing)
  } catch (error) {
    await refund()
    throw error
  }
  const result: SummaryResult = {id, data_calls_remaining: remaining, query: echo, summary: summarize(query.terms, stream.summary)}
  const count = stream.conversations
  const xml = request.format === 'xml'
  async function* body(): AsyncGenerator<Uint8Array, void, undefined> {
    let done = false
    let failed = false
    try {
      yield UTF8.encode(xml ? xmlHead(result, count) : jsonHead(result))
      for (let page = await stream.next(); page !== undefined; page = await stream.next()) yield page
      // Logged before the last bytes go out: an answer is never complete without its record.
      await record()
      done = true
      yield UTF8.encode(xml ? xmlTail(count) : JSON_TAIL)
    } catch (error) {
      failed = true
      await refund()
      throw error
    } finally {
      if (!done) {
        await stream.cancel()
        if (!failed) await record().catch(() => undefined)
      }
    }
  }
  return {kind: 'data', result, conversations: count, body}
}

// ---------------------------------------------------------------------------------------------
// Loading posts

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
    await repo.deletePosts(trx, existing.map((p) => p.id))
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
