import {CompiledQuery} from 'kysely'
import {AppError} from '../../errors.js'
import type {ConversationsDb as Db} from './tables.js'
import {inheritContext} from '../../store/context.js'
import {poolCounts} from '../../store/handle.js'
import {readTransaction} from '../../store/transactions.js'
import {beginRead} from '../../store/dialect.js'
import {type Alongside, NO_PARALLEL_WORKERS} from './search-postgres.js'
import type {SearchQuery, SummaryRow} from './search-types.js'
import {dataSearch, statementTimeout, summarySearch, type DataJob} from './search.js'
import {freeTicket, overBudget, type SearchStream, type SearchTicket, type SearchTiming, type Searcher} from './searcher.js'

const UTF8 = new TextEncoder()

/**
 * PostgreSQL: a second connection of `db`'s pool for a summary's comments (summaryCountsPostgres),
 * reading the snapshot the summary's transaction exported, under the same statement_timeout. It
 * goes back to the pool out of any transaction, whatever happened.
 */
export function snapshotAlongside(db: Db, timeoutMs: number): Alongside {
  return async (snapshot, run) => {
    if (!/^[0-9A-F]+-[0-9A-F]+-[0-9]+$/i.test(snapshot)) throw new Error(`PostgreSQL exported a snapshot named ${JSON.stringify(snapshot)}, not one medpanel can import`)
    return db.connection().execute(async (conn) => {
      inheritContext(conn, db)
      try {
        await conn.executeQuery(
          CompiledQuery.raw(
            `${beginRead('postgres').compile(db).sql}; set transaction snapshot '${snapshot}'; select set_config('statement_timeout', '${Math.max(1, Math.floor(timeoutMs))}', true), ${NO_PARALLEL_WORKERS}`,
          ),
        )
        return await run(conn)
      } finally {
        await conn.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined)
      }
    })
  }
}

/**
 * PostgreSQL: searches run on the store's pool (or its read replica's, when it has one), in
 * read-only REPEATABLE READ transactions, and the time budget is the transaction's
 * statement_timeout: a search past it is cancelled by the server and answered with the same 503
 * as on SQLite. A data answer streams: each page is read
 * when the caller asks for it, within the budget, and a cancelled answer ends its transaction.
 */
export class PostgresSearcher implements Searcher {
  readonly threaded = false
  /** Data answers being read: each holds a transaction (and a pool connection) until it ends. */
  private readonly open = new Set<() => Promise<void>>()
  constructor(private readonly db: Db) {}

  admit(key: string): SearchTicket {
    return freeTicket(key)
  }

  async summary(search: SearchQuery, timing: SearchTiming): Promise<SummaryRow[]> {
    const remaining = Math.max(1, Math.floor(timing.deadline - performance.now()))
    return withBudget(timing.budgetMs, () =>
      readTransaction(this.db, async (trx) => {
        await statementTimeout(trx, remaining)
        return summarySearch(trx, search, this.spare() ? snapshotAlongside(this.db, remaining) : undefined)
      }),
    )
  }

  /**
   * Whether a summary may take a second connection: one is idle that nobody waits for, or the
   * pool may open another with nobody waiting. A summary never waits for a second connection it
   * did not see free, so summaries holding one connection each cannot all wait for another; under
   * load the pool is busy, and each summary runs as one statement on its own connection.
   */
  private spare(): boolean {
    const counts = poolCounts(this.db)
    if (counts === undefined) return false
    return counts.idle > counts.waiting || (counts.waiting === 0 && counts.max !== undefined && counts.total < counts.max)
  }

  async data(job: DataJob, timing: SearchTiming): Promise<SearchStream> {
    const steps = dataSearch(this.db, job, {statementTimeoutMs: Math.max(1, Math.floor(timing.deadline - performance.now()))})
    const first = await withBudget(timing.budgetMs, () => steps.next())
    if (first.done || first.value.kind !== 'first') throw new Error('a data search ended before its counts')
    let ended = false
    let stall: ReturnType<typeof setTimeout> | undefined
    const end = async () => {
      clearTimeout(stall)
      if (ended) return
      ended = true
      this.open.delete(end)
      await steps.return(undefined)
    }
    // An answer nobody reads for stallMs is ended, freeing its connection (as a search thread is freed).
    const watch = () => {
      clearTimeout(stall)
      stall = setTimeout(() => void end(), timing.stallMs)
      stall.unref?.()
    }
    this.open.add(end)
    watch()
    return {
      summary: first.value.summary,
      conversations: first.value.conversations,
      next: async () => {
        if (ended) throw new AppError('unavailable', 'the answer was not read for too long', {details: `Nothing was read of it for ${timing.stallMs / 1000} s.`})
        clearTimeout(stall)
        try {
          const step = await withBudget(timing.budgetMs, () => steps.next())
          if (step.done || step.value.kind !== 'page') {
            await end()
            return undefined
          }
          watch()
          return UTF8.encode(step.value.text)
        } catch (error) {
          await end()
          throw error
        }
      },
      cancel: end,
    }
  }

  /** The store is closing: every answer still being read ends, giving its connection back. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((end) => end()))
  }
}

/** PostgreSQL's "canceling statement due to statement timeout" as the budget's 503. */
async function withBudget<T>(budgetMs: number, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if ((error as {code?: unknown} | null)?.code === '57014') throw overBudget(budgetMs)
    throw error
  }
}
