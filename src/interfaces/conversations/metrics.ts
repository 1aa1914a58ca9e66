import {defineMetrics} from '../../metrics/define.js'
import type {ConversationsDb as Db} from './tables.js'
import {conversationsConfig} from './config.js'
import {searchThreadsBusy} from './search-pool.js'

export const SEARCH_KINDS = ['summary', 'data'] as const
export type SearchKind = (typeof SEARCH_KINDS)[number]
/**
 * How an interface E call that reached its search ended: answered (`ok`), its query refused (400,
 * `invalid`), its key refused (402/403, `refused`), a per-key limit (429, `throttled`), no room for
 * it (503 with the search queue full or the store closing, `busy`), its time budget (503,
 * `timeout`), or anything else (`failed`).
 */
export const SEARCH_OUTCOMES = ['ok', 'invalid', 'refused', 'throttled', 'busy', 'timeout', 'failed'] as const
export type SearchOutcome = (typeof SEARCH_OUTCOMES)[number]

/** Interface E's metrics: its calls by kind and outcome, its searches' times, and its threads. */
export const searchMetrics = defineMetrics('conversations', (kit, {db}: {db: Db}) => {
  const searchRequests = kit.counter('search_requests_total', 'Interface E calls past their API key check, by kind and outcome', ['kind', 'outcome'])
  const requests = {} as Record<SearchKind, Record<SearchOutcome, {inc(): void}>>
  for (const kind of SEARCH_KINDS) {
    requests[kind] = {} as Record<SearchOutcome, {inc(): void}>
    for (const outcome of SEARCH_OUTCOMES) {
      const child = searchRequests.labels(kind, outcome)
      child.inc(0)
      requests[kind][outcome] = child
    }
  }
  const buckets = conversationsConfig.metrics.searchSecondsBuckets
  const made = {
    requests,
    queueWait: kit.histogram('search_queue_wait_seconds', 'Time a search waited for a search thread (0 where searches need none: in-memory and PostgreSQL stores)', buckets),
    duration: kit.histogram('search_duration_seconds', "Time a search ran, from getting its thread to its answer (a data answer's counts; its pages stream after)", buckets),
    truncated: kit.single('search_truncated_total', 'Data answers cut short after they began: the reader went away or stalled, or a page failed or ran out of time'),
    dataCalls: kit.single('search_data_calls_total', "Data calls that spent one of their key's allowance (a call given back after its search failed included)"),
  }
  kit.scraped({name: 'search_threads_busy', help: 'Search threads holding a search, stopped ones still finishing included (0 on stores searched without threads)'}, (gauge) =>
    gauge.set(searchThreadsBusy(db)),
  )
  return made
})
