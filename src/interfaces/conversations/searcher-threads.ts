import {Worker} from 'node:worker_threads'
import {conversationsConfig} from './config.js'
import {AppError} from '../../errors.js'
import type {ConversationLimits} from './limits.js'
import type {SearchQuery, SummaryRow} from './search-types.js'
import type {DataJob} from './search.js'
import {deserializeError, threadJob, type SearchReply, type SearchRequest, type SearchThreadSetup, type SearchValue} from './search-protocol.js'
import {busy, overBudget, type SearchStream, type SearchTicket, type SearchTiming, type Searcher} from './searcher.js'

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

export type PoolLimits = Pick<ConversationLimits, 'threads' | 'queue' | 'threadsPerKey' | 'queuePerKey'>

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
export class SearchPool implements Searcher {
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
    // Checked before a thread is taken: a format the thread cannot find is refused here.
    const sent = threadJob(job)
    const thread = await this.acquire(timing, ticket as Ticket)
    let first: SearchValue
    try {
      first = await this.call(thread, {type: 'data', job: sent}, timing.deadline, timing.budgetMs)
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
    // Its heap limits: ./config.ts says why.
    const heap = conversationsConfig.threadHeapMb
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
