import {AppError} from '../../errors.js'
import type {SearchQuery, SummaryRow} from './search-types.js'
import type {DataJob} from './search.js'

/*
 * What every searcher of interface E offers (searcher-in-process.ts, searcher-postgres.ts,
 * searcher-threads.ts; search-pool.ts picks a store's), and the 503s they refuse a search with.
 */

/** A data answer being read: its counts, then its pages of rendered conversations. */
export interface SearchStream {
  summary: SummaryRow[]
  conversations: number
  /** The next page, or undefined after the last one. */
  next(): Promise<Uint8Array | undefined>
  /** Ends the answer early (the caller went away); its snapshot and thread are freed. */
  cancel(): Promise<void>
}

/** How long a search may take: done by `deadline` (a performance.now() value), each later page within `budgetMs`. */
export interface SearchTiming {
  deadline: number
  budgetMs: number
  /** A data answer nobody reads for this long is ended. */
  stallMs: number
}

/**
 * A key's place among the searches in flight, taken before a call spends anything and handed
 * to `summary` or `data`, which give it back when the search (or its answer) ends.
 */
export interface SearchTicket {
  readonly key: string
  /** When the search got its thread (a performance.now() value); unset where searches need none. */
  readonly startedAt?: number
  /** Gives the place back when the call ends before its search was handed over. */
  cancel(): void
}

/** Where a store's searches run. */
export interface Searcher {
  readonly threaded: boolean
  /** A place for one more search of `key`, or a 429 when the key already has its share in flight. */
  admit(key: string): SearchTicket
  summary(search: SearchQuery, timing: SearchTiming, ticket: SearchTicket): Promise<SummaryRow[]>
  data(job: DataJob, timing: SearchTiming, ticket: SearchTicket): Promise<SearchStream>
  close(): Promise<void>
}

/** Where searches do not queue in this process (in-process, PostgreSQL's pool), a place is always given. */
export const freeTicket = (key: string): SearchTicket => ({key, cancel: () => undefined})

/** The 503s of a search that had no room (`busy`) or ran out of time (`timeout`), told apart for the metrics. */
const unavailable = new WeakMap<AppError, 'busy' | 'timeout'>()

/** Whether a search's error is one of the pool's 503s, and which. */
export function searchUnavailable(error: unknown): 'busy' | 'timeout' | undefined {
  return error instanceof AppError ? unavailable.get(error) : undefined
}

export function busy(error: AppError): AppError {
  unavailable.set(error, 'busy')
  return error
}

export function overBudget(budgetMs: number): AppError {
  const error = new AppError('unavailable', 'the search ran past its time budget', {
    headers: {'Retry-After': '5'},
    details: `A search may take at most ${budgetMs / 1000} s, waiting for a free search thread included; this one was stopped. Narrow the window or the terms, or try again later.`,
  })
  unavailable.set(error, 'timeout')
  return error
}
