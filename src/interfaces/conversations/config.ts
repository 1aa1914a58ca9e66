/**
 * Interface E's limits per call and per API key (interfaces/conversations/limits.ts says what
 * each one bounds; docs/conversations.md lists them with what a caller gets beyond them), and its
 * caches and metrics, each with the reason for its value.
 */
export const conversationsConfig = {
  /** Terms in one call, and characters and index words in one term: each term is searched for, so these bound one call's work. */
  maxTerms: 20,
  maxTermLength: 200,
  maxTermWords: 12,
  /**
   * A data call reads every conversation it answers with, so its window is bounded (a year, leap
   * day included); a summary reads per-day statistics and takes any window.
   */
  maxWindowDays: 366,
  /** Summary calls per key: a token bucket of 100 at once, then one a second, counted per `serve` process. */
  summaryBurst: 100,
  summaryPerSecond: 1,
  /**
   * The spec has no paging, so a data answer holds every match; this bounds one answer (a
   * 50,000-post whole-store answer took `serve` to ~190 MB, docs/conversations.md). More is
   * refused before anything is sent, and the data call given back.
   */
  maxConversations: 50_000,
  /** A search's time, waiting for a thread included: past it the search is stopped, its thread freed, and the caller answered 503. */
  searchBudgetMs: 10_000,
  /** A data answer nobody reads for this long is ended, so a stalled reader cannot hold a search thread. */
  stallMs: 60_000,
  /** Conversations read and written per page of a data answer: memory stays bounded by a page, not by the answer. */
  pageSize: 250,
  /**
   * Search threads per store: the cores less one, so the event loop keeps a core; at least 2, so
   * one key's searches (half the threads at most) never hold them all; at most 4.
   */
  minThreads: 2,
  maxThreads: 4,
  /**
   * A search thread's heap, in MiB: a small young generation makes the thread collect a page's
   * garbage before the next page (measured: a 140 MB answer streams in about 30 MB less of the
   * process's memory); the old generation's cap turns a runaway page into this thread's
   * failure (a 503), not the process's.
   */
  threadHeapMb: {old: 256, young: 8},
  /** Searches that may wait, per thread; one more is answered 503 at once instead of queueing without end. */
  queuePerThread: 16,
  /** Searches one key may have waiting besides those it runs: enough for a client keeping a few calls in flight; more would only wait out the budget. */
  queuePerKey: 4,
  /** In-process caches, in entries (src/config.ts, `caches`, says why each is bounded). */
  caches: {
    /** The clients of presented API keys (interface E): a client has a few keys at most. */
    apiKeyClients: 1_000,
    /** Interface E's per-key token buckets; past this, those that have filled up again are dropped. */
    rateLimitBuckets: 10_000,
  },
  metrics: {
    /** Seconds, for interface E's searches and their wait for a thread: the budget is 10 s. */
    searchSecondsBuckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  },
} as const
