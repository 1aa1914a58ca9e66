import type {ConversationsDb as Db} from './tables.js'
import type {SearchQuery, SummaryRow} from './search-types.js'
import {dataSearch, summarySearch, type DataJob} from './search.js'
import {freeTicket, type SearchStream, type SearchTicket, type Searcher} from './searcher.js'

const UTF8 = new TextEncoder()

/**
 * An in-memory store (the tests' stores) cannot be opened by another thread, so its searches run
 * on the store's own connection, through the same functions a thread would run. A data answer is
 * read whole before it is written: the answer is in memory anyway, as is the store, and the one
 * connection is not held while a reader takes its time.
 */
export class InProcessSearcher implements Searcher {
  readonly threaded = false
  constructor(private readonly db: Db) {}

  admit(key: string): SearchTicket {
    return freeTicket(key)
  }

  summary(search: SearchQuery): Promise<SummaryRow[]> {
    return summarySearch(this.db, search)
  }

  async data(job: DataJob): Promise<SearchStream> {
    let first: {summary: SummaryRow[]; conversations: number} = {summary: [], conversations: 0}
    const pages: Uint8Array[] = []
    for await (const step of dataSearch(this.db, job)) {
      if (step.kind === 'first') first = step
      else pages.push(UTF8.encode(step.text))
    }
    return {...first, next: async () => pages.shift(), cancel: async () => void pages.splice(0)}
  }

  async close(): Promise<void> {}
}
