import {Worker} from 'node:worker_threads'
import {CompiledQuery} from 'kysely'
import {config} from '../../config.js'
import {AppError} from '../../errors.js'
import {exeAsset} from '../../exe-assets.js'
import type {ConversationsDb as Db} from './tables.js'
import {inheritContext} from '../../store/context.js'
import {onStoreClose, poolCounts, readTransaction, replicaOf, storeFile} from '../../store/db.js'
import {beginRead, isPostgres} from '../../store/dialect.js'
import {sqliteDriverName} from '../../store/runtime.js'
import {betterSqlite3Location} from '../../store/sqlite-reader.js'
import type {ConversationLimits} from './limits.js'
import {type Alongside, NO_PARALLEL_WORKERS} from './search-postgres.js'
import type {SearchQuery, SummaryRow} from './search-types.js'
import {dataSearch, statementTimeout, summarySearch, type DataJob} from './search.js'
import {deserializeError, type SearchReply, type SearchRequest, type SearchThreadSetup, type SearchValue} from './search-protocol.js'

/**
 * The search thread's CommonJS source, bundled from search-worker.ts and put in by the build
 * (scripts/build.mjs, and vitest.config.ts for the tests; scripts/build-exe.mjs makes it an asset
 * of the executable instead, see exe-assets.ts). Absent when medpanel runs from its TypeScript
 * sources some other way; searches then run in-process.
 */
declare const MEDPANEL_SEARCH_WORKER: string | undefined

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
const freeTicket = (key: string): SearchTicket => ({key, cancel: () => undefined})

const UTF8 = new TextEncoder()

/**
 * An in-memory store (the tests' stores) cannot be opened by another thread, so its searches run
 * on the store's own connection, through the same functions a thread would run. A data answer is
 * read whole before it is written: the answer is in memory anyway, as is the store, and the one
 * connection is not held while a reader takes its time.
 */
class InProcessSearcher implements Searcher {
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
class PostgresSearcher implements Searcher {
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

interface Thread {
  worker: Worker
  stopping: boolean
  /** Set by the thread's 'error' event just before it exits. */
  failure?: unknown
  pending?: {id: number; resolve: (value: SearchValue) => void; reject: (error: Error) => void}
  /** The search the thread is leased to; a stopped thread keeps it until it has exited. */
  ticket?: Ticket
}

/** One key's searches in this pool. */
interface KeyShare {
  key: string
  /** Tickets not yet ended: admitted, waiting, or holding a thread. */
  tickets: number
  /** Threads held by the key's searches, stopped ones still finishing included. */
  running: number
  /** When the key last got a thread (the pool's count of leases then), 0 if not since its searches began. */
  servedAt: number
  waiting: Waiter[]
}

interface Ticket extends SearchTicket {
  share: KeyShare
  state: 'admitted' | 'waiting' | 'running' | 'done'
  startedAt?: number
}

interface Waiter {
  ticket: Ticket
  resolve: (thread: Thread) => void
  reject: (error: Error) => void
  timer: ReturnType<typeof setTimeout>
}

type PoolLimits = Pick<ConversationLimits, 'threads' | 'queue' | 'threadsPerKey' | 'queuePerKey'>

/** The 503s of a search that had no room (`busy`) or ran out of time (`timeout`), told apart for the metrics. */
const unavailable = new WeakMap<AppError, 'busy' | 'timeout'>()

/** Whether a search's error is one of the pool's 503s, and which. */
export function searchUnavailable(error: unknown): 'busy' | 'timeout' | undefined {
  return error instanceof AppError ? unavailable.get(error) : undefined
}

function busy(error: AppError): AppError {
  unavailable.set(error, 'busy')
  return error
}

function overBudget(budgetMs: number): AppError {
  const error = new AppError('unavailable', 'the search ran past its time budget', {
    headers: {'Retry-After': '5'},
    details: `A search may take at most ${budgetMs / 1000} s, waiting for a free search thread included; this one was stopped. Narrow the window or the terms, or try again later.`,
  })
  unavailable.set(error, 'timeout')
  return error
}

/**
 * A few threads (node:worker_threads), each with its own read-only connection to the store file,
 * run every search, so a long one holds up other searches at most, never the event loop that
 * answers sign-on, balances, exports and health checks. A search waits for a free thread (at most
 * `queue` of them wait; one more is refused at once), and must be done within the time budget
 * from its arrival. Past it the caller is answered 503 and the thread is terminated: SQLite
 * cannot be interrupted from JavaScript, so the thread ends when its current statement returns,
 * and only then is a new one started in its place. Threads still finishing count against the
 * pool's size, so abandoned searches can never add up to more threads than that.
 *
 * The threads are shared fairly between API keys: one key runs at most `threadsPerKey` searches
 * at once (a stopped search still finishing counts, until its thread exits) and waits for its
 * own to end past that even while a thread is free, so it can never hold them all; at most
 * `queuePerKey` more of its searches wait, and one more is answered 429 at once. A freed thread
 * goes to the waiting key that has gone longest without one, to its first search, so one key's
 * long queue does not stand in front of another key's search.
 */
class SearchPool implements Searcher {
  readonly threaded = true
  private readonly live = new Set<Thread>()
  private readonly idle: Thread[] = []
  /** Every key with searches in flight here. */
  private readonly shares = new Map<string, KeyShare>()
  /** The keys with searches waiting, in the order they began waiting. */
  private readonly queued = new Map<string, KeyShare>()
  private waitingCount = 0
  private leases = 0
  private stopping = 0
  private nextId = 1
  private closed = false

  constructor(
    private readonly source: string,
    private readonly setup: SearchThreadSetup,
    private readonly limits: PoolLimits,
  ) {}

  /** Searches one key may run at once: at least one, at most every thread. */
  private get perKey(): number {
    return Math.max(1, Math.min(this.limits.threads, this.limits.threadsPerKey))
  }

  admit(key: string): Ticket {
    if (this.closed) throw busy(new AppError('unavailable', 'the store is closing'))
    const share = this.shares.get(key) ?? {key, tickets: 0, running: 0, servedAt: 0, waiting: []}
    if (share.tickets >= this.perKey + this.limits.queuePerKey) {
      throw new AppError('too_many_requests', 'too many searches at once with this API key', {
        headers: {'Retry-After': '1'},
        details: `At most ${this.perKey} of a key's searches run at once on this server, and ${this.limits.queuePerKey} more wait; try again when one has been answered.`,
      })
    }
    this.shares.set(key, share)
    share.tickets++
    const ticket: Ticket = {
      key,
      share,
      state: 'admitted',
      cancel: () => {
        if (ticket.state === 'admitted') this.settle(ticket)
      },
    }
    return ticket
  }

  /** The ticket's search is over: its place is the key's again. */
  private settle(ticket: Ticket): void {
    if (ticket.state === 'done') return
    ticket.state = 'done'
    ticket.share.tickets--
    if (ticket.share.tickets === 0 && this.shares.get(ticket.key) === ticket.share) this.shares.delete(ticket.key)
  }

  async summary(search: SearchQuery, timing: SearchTiming, ticket: SearchTicket): Promise<SummaryRow[]> {
    const thread = await this.acquire(timing, ticket as Ticket)
    try {
      const value = await this.call(thread, {type: 'summary', search}, timing.deadline, timing.budgetMs)
      return value.kind === 'summary' ? value.rows : []
    } finally {
      this.release(thread)
    }
  }

  async data(job: DataJob, timing: SearchTiming, ticket: SearchTicket): Promise<SearchStream> {
    const thread = await this.acquire(timing, ticket as Ticket)
    let first: SearchValue
    try {
      first = await this.call(thread, {type: 'data', job}, timing.deadline, timing.budgetMs)
    } catch (error) {
      this.release(thread)
      throw error
    }
    if (first.kind !== 'first') {
      this.release(thread)
      return {summary: [], conversations: 0, next: async () => undefined, cancel: async () => undefined}
    }
    return this.stream(thread, first, timing)
  }

  /**
   * The rest of a data answer, on the thread that holds its snapshot until the last page or a
   * cancel. Each page gets the time budget anew. A reader that takes no page for `stallMs` loses
   * the answer, so a stalled client cannot keep a thread.
   */
  private stream(thread: Thread, first: {summary: SummaryRow[]; conversations: number}, timing: SearchTiming): SearchStream {
    let state: 'open' | 'ended' | 'stalled' = 'open'
    let stall: ReturnType<typeof setTimeout> | undefined
    const arm = () => {
      stall = setTimeout(() => {
        state = 'stalled'
        void this.finish(thread, timing.budgetMs)
      }, timing.stallMs)
    }
    arm()
    return {
      summary: first.summary,
      conversations: first.conversations,
      next: async () => {
        if (state === 'stalled') throw new AppError('unavailable', 'the answer was not read for too long', {details: `Nothing was read of it for ${timing.stallMs / 1000} s.`})
        if (state === 'ended') return undefined
        clearTimeout(stall)
        let value: SearchValue
        try {
          value = await this.call(thread, {type: 'next'}, performance.now() + timing.budgetMs, timing.budgetMs)
        } catch (error) {
          state = 'ended'
          this.release(thread)
          throw error
        }
        if (value.kind === 'page') {
          arm()
          return value.bytes
        }
        state = 'ended'
        this.release(thread)
        return undefined
      },
      cancel: async () => {
        if (state !== 'open') return
        state = 'ended'
        clearTimeout(stall)
        await this.finish(thread, timing.budgetMs)
      },
    }
  }

  /** Ends the thread's open answer, then gives the thread back (a thread that does not answer in time is stopped). */
  private async finish(thread: Thread, budgetMs: number): Promise<void> {
    try {
      await this.call(thread, {type: 'cancel'}, performance.now() + budgetMs, budgetMs)
    } catch {
      // a stopped thread frees its snapshot with it
    }
    this.release(thread)
  }

  /** Threads holding a search now, stopped ones still finishing included. */
  busy(): number {
    return this.live.size - this.idle.length + this.stopping
  }

  async close(): Promise<void> {
    this.closed = true
    for (const share of this.queued.values()) {
      for (const waiter of share.waiting.splice(0)) {
        clearTimeout(waiter.timer)
        this.settle(waiter.ticket)
        waiter.reject(busy(new AppError('unavailable', 'the store is closing')))
      }
    }
    this.queued.clear()
    this.waitingCount = 0
    const threads = [...this.live]
    this.live.clear()
    this.idle.length = 0
    await Promise.all(threads.map((thread) => thread.worker.terminate().catch(() => undefined)))
  }

  /**
   * A thread for the ticket's search: at once if its key is under its share and a thread is free
   * (or may be started), else after waiting its turn. Refused at once when too many searches wait.
   */
  private acquire(timing: SearchTiming, ticket: Ticket): Promise<Thread> {
    const refuse = (error: AppError) => {
      this.settle(ticket)
      return Promise.reject(error)
    }
    if (this.closed) return refuse(busy(new AppError('unavailable', 'the store is closing')))
    const share = ticket.share
    if (share.running < this.perKey) {
      const idle = this.idle.pop()
      if (idle) return Promise.resolve(this.lease(idle, ticket))
      if (this.live.size + this.stopping < this.limits.threads) return Promise.resolve(this.lease(this.spawn(), ticket))
    }
    if (this.waitingCount >= this.limits.queue) {
      return refuse(
        busy(
          new AppError('unavailable', 'too many searches are waiting', {
            headers: {'Retry-After': '1'},
            details: `At most ${this.limits.queue} searches wait for a search thread; try again shortly.`,
          }),
        ),
      )
    }
    return new Promise<Thread>((resolve, reject) => {
      const waiter: Waiter = {
        ticket,
        resolve,
        reject,
        timer: setTimeout(
          () => {
            this.unqueue(waiter)
            this.settle(ticket)
            reject(overBudget(timing.budgetMs))
          },
          Math.max(0, timing.deadline - performance.now()),
        ),
      }
      ticket.state = 'waiting'
      share.waiting.push(waiter)
      this.waitingCount++
      if (!this.queued.has(share.key)) this.queued.set(share.key, share)
    })
  }

  private unqueue(waiter: Waiter): void {
    const share = waiter.ticket.share
    const index = share.waiting.indexOf(waiter)
    if (index < 0) return
    share.waiting.splice(index, 1)
    this.waitingCount--
    if (share.waiting.length === 0) this.queued.delete(share.key)
  }

  /**
   * Hands free threads (idle, or room for a new one) to waiting searches, by turns: of the keys
   * under their share, the one that got a thread longest ago (a key new to the pool first), its
   * first waiting search. A key that has just been served, directly or from the queue, so goes
   * behind every other key waiting.
   */
  private dispatch(): void {
    while (!this.closed) {
      let next: KeyShare | undefined
      for (const share of this.queued.values()) {
        if (share.running < this.perKey && (!next || share.servedAt < next.servedAt)) next = share
      }
      if (!next) return
      const thread = this.idle.pop() ?? (this.live.size + this.stopping < this.limits.threads ? this.spawn() : undefined)
      if (!thread) return
      const waiter = next.waiting[0]!
      this.unqueue(waiter)
      clearTimeout(waiter.timer)
      waiter.resolve(this.lease(thread, waiter.ticket))
    }
  }

  /** A thread at work keeps the process alive; an idle one does not. */
  private lease(thread: Thread, ticket: Ticket): Thread {
    thread.ticket = ticket
    ticket.state = 'running'
    ticket.startedAt = performance.now()
    ticket.share.running++
    ticket.share.servedAt = ++this.leases
    thread.worker.ref()
    return thread
  }

  /** The thread's search is over (answered, failed, or its stopped thread exited): the key's share frees up. */
  private unlease(thread: Thread): void {
    const ticket = thread.ticket
    if (!ticket) return
    thread.ticket = undefined
    ticket.share.running--
    this.settle(ticket)
  }

  private release(thread: Thread): void {
    if (!this.live.has(thread) || thread.pending || !thread.ticket) return
    this.unlease(thread)
    thread.worker.unref()
    this.idle.push(thread)
    this.dispatch()
  }

  private spawn(): Thread {
    // Its heap limits: config.ts says why.
    const heap = config.conversations.threadHeapMb
    const worker = new Worker(this.source, {eval: true, workerData: this.setup, resourceLimits: {maxOldGenerationSizeMb: heap.old, maxYoungGenerationSizeMb: heap.young}})
    const thread: Thread = {worker, stopping: false}
    worker.on('message', (reply: SearchReply) => {
      const pending = thread.pending
      if (!pending || pending.id !== reply.id) return
      thread.pending = undefined
      if (reply.ok) pending.resolve(reply.value)
      else pending.reject(deserializeError(reply.error))
    })
    worker.on('error', (error) => {
      thread.failure = error
    })
    worker.on('exit', () => this.exited(thread))
    this.live.add(thread)
    return thread
  }

  /** Stops a thread whose search ran out of time; a new one may start once it has exited. */
  private stop(thread: Thread): void {
    if (!this.live.delete(thread)) return
    const index = this.idle.indexOf(thread)
    if (index >= 0) this.idle.splice(index, 1)
    thread.stopping = true
    this.stopping++
    void thread.worker.terminate().catch(() => undefined)
  }

  private exited(thread: Thread): void {
    if (thread.stopping) this.stopping--
    else {
      this.live.delete(thread)
      const index = this.idle.indexOf(thread)
      if (index >= 0) this.idle.splice(index, 1)
    }
    const pending = thread.pending
    thread.pending = undefined
    if (pending) {
      const reason = thread.failure instanceof Error ? thread.failure.message : 'it exited'
      pending.reject(new AppError('unavailable', 'a search thread stopped', {cause: thread.failure, details: `The search could not finish (${reason}); try again.`}))
    }
    this.unlease(thread)
    this.dispatch()
  }

  /** Sends one request and waits for its reply; past the deadline the thread is stopped and the caller told so. */
  private call(thread: Thread, request: DistributiveOmit<SearchRequest, 'id'>, deadline: number, budgetMs: number): Promise<SearchValue> {
    const id = this.nextId++
    return new Promise<SearchValue>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          thread.pending = undefined
          this.stop(thread)
          reject(overBudget(budgetMs))
        },
        Math.max(0, deadline - performance.now()),
      )
      thread.pending = {
        id,
        resolve: (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        },
      }
      thread.worker.postMessage({...request, id})
    })
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** The search thread's source: embedded in dist/ (and under Deno), an asset of the single executable. */
function workerSource(): string | undefined {
  return typeof MEDPANEL_SEARCH_WORKER === 'string' ? MEDPANEL_SEARCH_WORKER : exeAsset('search-worker.cjs')
}

const searchers = new WeakMap<object, Searcher>()

/** Search threads busy on the store's pool now; 0 before its first search, and where searches run without threads. */
export function searchThreadsBusy(db: Db): number {
  const searcher = searchers.get(db)
  return searcher instanceof SearchPool ? searcher.busy() : 0
}

/**
 * The searcher of a store, made on first use: a pool of search threads for a store file, the
 * store's own connection for an in-memory store (or where no thread source was built in). The
 * pool stops with the store.
 */
export function searcherFor(db: Db, limits: PoolLimits): Searcher {
  let searcher = searchers.get(db)
  if (searcher) return searcher
  const file = storeFile(db)
  const source = workerSource()
  if (isPostgres(db)) {
    const postgres = new PostgresSearcher(replicaOf(db))
    onStoreClose(db, () => postgres.close())
    searcher = postgres
  } else if (file !== undefined && source !== undefined) {
    const setup: SearchThreadSetup = {file, betterSqlite3: sqliteDriverName() === 'better-sqlite3' ? betterSqlite3Location() : undefined}
    const pool = new SearchPool(source, setup, limits)
    onStoreClose(db, () => pool.close())
    searcher = pool
  } else {
    searcher = new InProcessSearcher(db)
  }
  searchers.set(db, searcher)
  return searcher
}
