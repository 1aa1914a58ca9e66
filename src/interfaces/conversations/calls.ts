import {AppError} from '../../errors.js'
import {iso} from '../../lib/clock.js'
import {newUuid} from '../../lib/ids.js'
import type {ConversationsDb as Db} from './tables.js'
import {readTransaction, writeLater, writeTransaction} from '../../store/transactions.js'
import type {CountersOf} from '../../metrics/metrics.js'
import type {SearchOutcome, searchMetrics} from './metrics.js'
import type {AnswerFormat} from './format.js'
import {formatNamed, type FormatName} from './formats.js'
import {currentPeriod, refuseKey} from './keys.js'
import type {ConversationLimits} from './limits.js'
import type {SummaryRow} from './search-types.js'
import type {Logger} from '../../lib/log.js'
import type {RateLimiter} from './rate-limit.js'
import * as repo from './repository.js'
import {tokenizeTexts} from '../../store/fts-tokens.js'
import {isIsoDateTime, type Method} from './schema.js'
import {searchUnavailable, type SearchStream, type SearchTicket, type SearchTiming, type Searcher} from './searcher.js'
import type {SearchQuery} from './search-types.js'
import type {ApiKeyRow} from './tables.js'
import {isoSeconds, summarize, type SummaryResult} from './views.js'

// The calls of interface E: a checked query, the allowance, and the search run on the search threads.

const DAY_MS = 86_400_000

/** What a caller sent, before any checking. */
export interface CallRequest {
  method: Method
  /** The key the call was authenticated with (keys.ts, authenticateKey). */
  key: ApiKeyRow
  terms: readonly string[]
  start: string | undefined
  end: string | undefined
  /** The answer's format (or its name in formats.ts); a data answer's pages are rendered where they are read. */
  format: AnswerFormat | FormatName
  /** A HEAD request: checked like a GET, but it neither spends the allowance nor searches. */
  headOnly?: boolean
}

/** What a call runs with besides the store: the limits, the summary calls' buckets, and where searches run. */
export interface CallContext {
  limits: ConversationLimits
  summaryRate: RateLimiter
  searcher: Searcher
  /** Where a summary of few documents is read on this thread (repo.fewDocumentsSummary): the store's read-only connection; `db` when absent. */
  reader?: Db
  /** Where failures that reach no caller are written (a refund or a record that could not be saved). */
  logger: Logger
  /** E's counters in the serving app's registry (src/interfaces/conversations/metrics.ts); undefined with metrics off. */
  counted?: CountersOf<typeof searchMetrics> | undefined
}

/** A summary answer, whole; or a data answer as its head and a generator of its bytes (head included). */
export type CallAnswer =
  | {kind: 'summary'; result: SummaryResult}
  | {kind: 'data'; result: SummaryResult; conversations: number; body: () => AsyncGenerator<Uint8Array, void, undefined>}

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
  // A summary reads the per-day statistics, so it costs days × terms whatever the window holds,
  // and its time is bounded by the search budget: any window is taken. A data call reads every
  // conversation it answers with, so its window stays bounded (as does its answer's size).
  if (request.method === 'data' && new Date(end).getTime() - new Date(start).getTime() > limits.maxWindowDays * DAY_MS) {
    throw new AppError('bad_request', `the window of a data call is longer than ${limits.maxWindowDays} days`, {
      details: `The window ${isoSeconds(start)} .. ${isoSeconds(end)} is too long for a data call; split it into windows of at most ${limits.maxWindowDays} days (a summary takes any window).`,
    })
  }
  return {terms, start, end}
}

/**
 * The terms split as the index splits text: the same FTS5 tokenizer on every store (PostgreSQL
 * included), ASCII in JavaScript and anything else by SQLite in this process (fts-tokens.ts), so
 * it needs no connection and no transaction.
 */
async function termTokens(terms: readonly string[], limits: ConversationLimits): Promise<string[][]> {
  const tokens = await tokenizeTexts(terms)
  tokens.forEach((list, index) => {
    if (list.length === 0)
      throw new AppError('bad_request', `terms[${index}] has no letters or digits to search for`, {
        details: `Term ${JSON.stringify(terms[index])}: punctuation alone never matches a word.`,
      })
    if (list.length > limits.maxTermWords) throw new AppError('bad_request', `terms[${index}] has more than ${limits.maxTermWords} words`, {details: 'Shorten the phrase.'})
  })
  return tokens
}

const UTF8 = new TextEncoder()

/**
 * A key's standing for one call: refused (401, 402, 403) or, for a data call, with no calls left
 * (429, with Retry-After when the allowance renews); else the calls left and the period's start.
 */
function allowance(key: ApiKeyRow, method: Method, now: Date): {key: ApiKeyRow; remaining: number; used: number; periodStarted: string} {
  refuseKey(key, method, now)
  const period = currentPeriod(key, now)
  const remaining = Math.max(0, key.data_call_allowance - period.used)
  if (method === 'data' && remaining === 0) {
    const headers: Record<string, string> = {}
    if (period.renewsAt) headers['Retry-After'] = String(Math.max(1, Math.ceil((period.renewsAt.getTime() - now.getTime()) / 1000)))
    throw new AppError('too_many_requests', 'no data calls are left on this API key', {
      headers,
      details: period.renewsAt ? `The allowance of ${key.data_call_allowance} data calls renews at ${isoSeconds(iso(period.renewsAt))}.` : 'Ask for a larger allowance.',
    })
  }
  return {key, remaining, used: period.used, periodStarted: iso(period.started)}
}

/**
 * One call of interface E, its key already checked (401, 402, 403 by the apiKey middleware):
 * query (400), then the key's share of the search threads, the summary rate or the data
 * allowance (429). A data call spends its allowance in a short write transaction (BEGIN
 * IMMEDIATE), so two calls racing for the last one cannot both win. The search itself runs on the store's search threads (search-pool.ts), in a
 * read transaction of their own that holds no write lock, within the time budget. A data call
 * whose search fails, before or while its answer streams, gets its call back; one whose reader
 * goes away has spent it.
 */
export async function conversationCall(db: Db, request: CallRequest, now: Date, context: CallContext): Promise<CallAnswer> {
  // Counted for the metrics by kind and outcome; a HEAD request runs no search and is not counted.
  const counted = request.headOnly ? undefined : context.counted?.requests[request.method]
  try {
    const answer = await call(db, request, now, context)
    counted?.ok.inc()
    return answer
  } catch (error) {
    counted?.[searchOutcome(error)].inc()
    throw error
  }
}

async function call(db: Db, request: CallRequest, now: Date, context: CallContext): Promise<CallAnswer> {
  const {limits} = context
  const arrived = performance.now()
  const spends = request.method === 'data' && !request.headOnly
  const query = parseQuery(request, limits)
  // Terms that cannot be searched are refused before a data call is spent.
  const tokens = request.headOnly ? [] : await termTokens(query.terms, limits)
  // A key with its share of the search threads in flight is refused here (429), before a data
  // call is spent or a summary call taken from its bucket; the place is given back if the call
  // ends before its search is handed over.
  const ticket = request.headOnly ? undefined : context.searcher.admit(request.key.id)
  try {
    return await search(db, request, now, context, {arrived, spends, query, tokens, ticket})
  } catch (error) {
    ticket?.cancel()
    throw error
  }
}

/** How a call ended, for the metrics (SEARCH_OUTCOMES says what each means). */
function searchOutcome(error: unknown): SearchOutcome {
  const unavailable = searchUnavailable(error)
  if (unavailable) return unavailable
  if (!(error instanceof AppError)) return 'failed'
  if (error.status === 400) return 'invalid'
  if (error.status === 401 || error.status === 402 || error.status === 403) return 'refused'
  return error.status === 429 ? 'throttled' : 'failed'
}

/** A search's wait for its thread and its run, from when it was handed over until it answered. */
function observeSearch(metrics: CallContext['counted'], ticket: SearchTicket, handedAt: number): void {
  if (!metrics) return
  const started = ticket.startedAt ?? handedAt
  metrics.queueWait.observe(Math.max(0, started - handedAt) / 1000)
  metrics.duration.observe((performance.now() - started) / 1000)
}

/** What a call has once its query is checked and its thread place taken (see call). */
interface Admitted {
  arrived: number
  spends: boolean
  query: ParsedQuery
  tokens: string[][]
  ticket: SearchTicket | undefined
}

/** A call past its allowance, about to search: everything its answer is made from. */
interface Searching {
  db: Db
  request: CallRequest
  now: Date
  context: CallContext
  id: string
  key: ApiKeyRow
  remaining: number
  periodStarted: string
  echo: {start: string; end: string; terms: string[]}
  query: ParsedQuery
  wanted: SearchQuery
  timing: SearchTiming
  ticket: SearchTicket
  /** Writes the call's record (conversation_calls), durably: a data call's. */
  record: () => Promise<void>
}

async function search(db: Db, request: CallRequest, now: Date, context: CallContext, admitted: Admitted): Promise<CallAnswer> {
  const {limits} = context
  const {query, ticket} = admitted
  const {key, remaining, periodStarted} = await spendAllowance(db, request, now, admitted.spends, context.counted)
  const echo = {start: isoSeconds(query.start), end: isoSeconds(query.end), terms: query.terms}
  const id = newUuid()
  if (request.headOnly || !ticket) {
    const empty = {id, data_calls_remaining: remaining, query: echo, summary: {terms: [], uniques: {posts: 0, comments: 0}}}
    return {kind: 'summary', result: empty}
  }
  if (request.method === 'summary') takeSummaryRate(context, key.id, now)
  const searching: Searching = {
    db,
    request,
    now,
    context,
    id,
    key,
    remaining,
    periodStarted,
    echo,
    query,
    ticket,
    wanted: {terms: query.terms, tokens: admitted.tokens, start: query.start, end: query.end},
    timing: {deadline: admitted.arrived + limits.searchBudgetMs, budgetMs: limits.searchBudgetMs, stallMs: limits.stallMs},
    record: () => writeTransaction(db, (trx) => repo.insertCall(trx, callRow(searching))),
  }
  return request.method === 'summary' ? summaryCall(searching) : dataCall(searching)
}

/** The row that records a call (conversation_calls). */
function callRow(s: Searching): Parameters<typeof repo.insertCall>[1] {
  return {id: s.id, key_id: s.key.id, method: s.request.method, query: JSON.stringify(s.echo), created_at: iso(s.now)}
}

/**
 * The key's allowance for this call. A summary spends nothing: the key row the middleware has
 * just read and checked is the one its answer reports from. A data call reads the row again
 * inside the transaction that spends the call, so two calls racing for the last one cannot both win.
 */
async function spendAllowance(db: Db, request: CallRequest, now: Date, spends: boolean, counted: CallContext['counted']): Promise<ReturnType<typeof allowance>> {
  if (request.method === 'summary') return allowance(request.key, request.method, now)
  const checked = await (spends ? writeTransaction : readTransaction)(db, async (trx) => {
    const key = (await repo.findApiKey(trx, request.key.id)) ?? request.key
    const state = allowance(key, request.method, now)
    if (spends) {
      await repo.updateApiKeyRow(trx, key.id, {data_calls_used: state.used + 1, period_started_at: state.periodStarted})
      state.remaining -= 1
    }
    return state
  })
  if (spends) counted?.dataCalls.inc()
  return checked
}

/** A summary call taken from the key's bucket, or a 429 saying when to try again. */
function takeSummaryRate({summaryRate, limits}: CallContext, keyId: string, now: Date): void {
  const wait = summaryRate.take(keyId, now)
  if (wait === undefined) return
  throw new AppError('too_many_requests', 'too many summary calls with this API key', {
    headers: {'Retry-After': String(wait)},
    details: `A key may make ${limits.summaryBurst} summary calls at once and ${limits.summaryPerSecond} more per second; try again in ${wait} s.`,
  })
}

/**
 * A summary: its search on the store's searcher, then its answer. Its record decides no
 * allowance (a summary spends none; its rate is counted in memory, rate-limit.ts), so nobody
 * waits for it: it is handed over as the answer goes out, held a moment (config.store.laterWritesMs)
 * with the records of the calls that come meanwhile, and written with them in one transaction, a
 * relaxed write (not synced on its own, as DPoP's spent proofs are). Serve's stop and the store's
 * close write it first; a crash of the process in that moment, or a power cut before the next
 * sync, may lose the last few summary records, never a data call's. Only an answered summary is
 * recorded, so a failed one leaves no row.
 */
async function summaryCall(s: Searching): Promise<CallAnswer> {
  const handedAt = performance.now()
  const rows = (await fewDocuments(s)) ?? (await s.context.searcher.summary(s.wanted, s.timing, s.ticket))
  observeSearch(s.context.counted, s.ticket, handedAt)
  writeLater(
    s.db,
    (trx) => repo.insertCall(trx, callRow(s)),
    {durability: 'relaxed'},
    (lost) => logLost(s, 'could not record a summary call', lost),
  )
  return {kind: 'summary', result: {id: s.id, data_calls_remaining: s.remaining, query: s.echo, summary: summarize(s.query.terms, rows)}}
}

/**
 * A window of few documents (an empty one above all) counted from its documents on this thread,
 * in a read of a few rows (repo.fewDocumentsSummary): handing it to a search thread and back
 * would cost more than the counting. The place taken for its search is given back. Undefined when
 * the window holds more, or where searches run on no threads (in-process, PostgreSQL).
 */
async function fewDocuments(s: Searching): Promise<SummaryRow[] | undefined> {
  if (!s.context.searcher.threaded) return undefined
  const rows = await repo.fewDocumentsSummary(s.context.reader ?? s.db, s.wanted)
  if (rows) s.ticket.cancel()
  return rows
}

/**
 * A data call's answer: its head once the search has its summary, then its pages as the thread
 * reads them. A search that fails, before or while the answer streams, gives the call back; an
 * answer whose reader went away is still recorded, and its call stays spent.
 */
async function dataCall(s: Searching): Promise<CallAnswer> {
  const {db, request, context, ticket} = s
  // The caller hears the search's failure; a refund that fails too is only logged.
  const refund = () => repo.refundDataCall(db, s.key.id, s.periodStarted).catch((lost) => logLost(s, 'could not give back the data call of a failed answer', lost))
  const format = typeof request.format === 'string' ? formatNamed(request.format) : request.format
  let stream: SearchStream
  try {
    const handedAt = performance.now()
    stream = await context.searcher.data({search: s.wanted, format, pageSize: context.limits.pageSize, maxConversations: context.limits.maxConversations}, s.timing, ticket)
    observeSearch(context.counted, ticket, handedAt)
  } catch (error) {
    await refund()
    throw error
  }
  const result: SummaryResult = {id: s.id, data_calls_remaining: s.remaining, query: s.echo, summary: summarize(s.query.terms, stream.summary)}
  const count = stream.conversations
  return {kind: 'data', result, conversations: count, body: () => answerBody(s, stream, format, result, refund)}
}

/**
 * A data answer's bytes: the head, the search's pages, the tail. The call is recorded before the
 * last bytes go out; an answer cut short (the caller left, the search failed) is counted, its
 * search stopped, and still recorded, or its data call given back when the search failed.
 */
async function* answerBody(
  s: Searching,
  stream: SearchStream,
  format: AnswerFormat,
  result: SummaryResult,
  refund: () => Promise<void>,
): AsyncGenerator<Uint8Array, void, undefined> {
  const count = stream.conversations
  let done = false
  let failed = false
  try {
    yield UTF8.encode(format.head(result, count))
    for (let page = await stream.next(); page !== undefined; page = await stream.next()) yield page
    // Logged before the last bytes go out: an answer is never complete without its record.
    await s.record()
    done = true
    yield UTF8.encode(format.tail(count))
  } catch (error) {
    failed = true
    await refund()
    throw error
  } finally {
    if (!done) await cutShort(s, stream, failed)
  }
}

/** An answer that ended before its tail: counted, its search stopped, and recorded unless it failed. */
async function cutShort(s: Searching, stream: SearchStream, failed: boolean): Promise<void> {
  s.context.counted?.truncated.inc()
  await stream.cancel()
  // Nobody is left to hear that the record of an answer cut short failed: it is logged.
  if (!failed) await s.record().catch((lost) => logLost(s, 'could not record a data answer cut short', lost))
}

/**
 * A store write that failed after the caller's answer was decided (a record, a refund): the
 * caller hears of its own call's failure, the operator of this one. One line with the call's and
 * the key's ids (never the key itself) and the error's message.
 */
function logLost(s: Searching, what: string, error: unknown): void {
  const detail = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')
  s.context.logger.log('error', `conversations: ${what}: call ${s.id} key ${s.key.id}: ${detail}`, `conversations: ${what}`, {
    interface: 'E',
    call_id: s.id,
    key_id: s.key.id,
    error: detail,
  })
}
