import {availableParallelism, cpus} from 'node:os'
import {conversationsConfig} from './config.js'

/** Interface E's own settings, which src/app.ts composes into the app's (AppSettings). */
export interface ConversationSettings {
  /** Interface E's limits where they differ from the documented defaults (tests reach them quickly). */
  conversations?: Partial<ConversationLimits>
}

/**
 * What one caller may ask of interface E, and how long and how wide its searches may run. The
 * numbers are set in ./config.ts and listed in docs/conversations.md ("Limits"); the app's settings
 * (ConversationSettings) can override them, which tests do to reach a limit quickly.
 */
export interface ConversationLimits {
  /** Distinct terms in one call. */
  maxTerms: number
  /** Characters in one term. */
  maxTermLength: number
  /** Words (index tokens) in one term. */
  maxTermWords: number
  /** Longest window of a data call, end minus start; a summary takes any window. */
  maxWindowDays: number
  /** Summary calls one key may make at once before it has to wait (the token bucket's size). */
  summaryBurst: number
  /** Summary calls a key earns back per second once its burst is spent. */
  summaryPerSecond: number
  /** Conversations in one data answer; a search matching more is refused before anything is sent. */
  maxConversations: number
  /**
   * How long a search may take, waiting for a free search thread included; past it the caller
   * gets a 503 and the thread running it is stopped. A data answer's later pages get the same
   * time each.
   */
  searchBudgetMs: number
  /** A data answer whose reader takes no more bytes for this long is ended, freeing its thread. */
  stallMs: number
  /** Conversations read and written per page of a data answer. */
  pageSize: number
  /** Search threads per store; each has its own read-only connection. */
  threads: number
  /** Searches that may wait for a free thread; one more is answered 503 at once. */
  queue: number
  /**
   * Searches one API key may run at once on this process's threads. A key past it waits even
   * while a thread is free, so another key's search always finds one soon: the threads are
   * never all held by one key. Counted per `serve` process, as the threads are.
   */
  threadsPerKey: number
  /**
   * Searches one API key may have waiting besides those it runs; one more is answered 429 at
   * once, before it spends anything. Waiting searches are served round-robin between keys.
   */
  queuePerKey: number
}

function cores(): number {
  try {
    return availableParallelism()
  } catch {
    return cpus().length || 1
  }
}

export function defaultLimits(): ConversationLimits {
  const c = conversationsConfig
  const threads = Math.min(c.maxThreads, Math.max(c.minThreads, cores() - 1))
  return {
    maxTerms: c.maxTerms,
    maxTermLength: c.maxTermLength,
    maxTermWords: c.maxTermWords,
    maxWindowDays: c.maxWindowDays,
    summaryBurst: c.summaryBurst,
    summaryPerSecond: c.summaryPerSecond,
    maxConversations: c.maxConversations,
    searchBudgetMs: c.searchBudgetMs,
    stallMs: c.stallMs,
    pageSize: c.pageSize,
    threads,
    queue: threads * c.queuePerThread,
    // Half the threads, rounded up: with the usual two, one key runs one search and another key's
    // search finds the other thread free.
    threadsPerKey: Math.ceil(threads / 2),
    queuePerKey: c.queuePerKey,
  }
}

/**
 * The limits an app runs with: the defaults with `overrides` on top, the queue and a key's share
 * of the threads following an overridden thread count unless they are overridden too.
 */
export function conversationLimits(overrides: Partial<ConversationLimits> = {}): ConversationLimits {
  const threads = overrides.threads ?? defaultLimits().threads
  return {...defaultLimits(), queue: threads * conversationsConfig.queuePerThread, threadsPerKey: Math.ceil(threads / 2), ...overrides}
}
