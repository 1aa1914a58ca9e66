import {CompiledQuery, sql, type Kysely} from 'kysely'
import {contextOf, inheritContext} from './context.js'
import {config} from '../config.js'
import {perHandleAndKey} from './per-handle.js'

/**
 * Group commit. Every write transaction of this process on one store goes through one writer,
 * which collects what arrives within one event-loop turn (or up to MAX_BATCH of them) and commits
 * it as one transaction: one write lock, one commit, one sync to disk. Each request runs inside
 * its own savepoint, in arrival order, so a request that fails (insufficient funds, a conflict, a
 * 422) rolls back alone and is answered exactly as if it had run by itself, while the others in
 * its batch commit. Nobody is answered before the batch's commit returns: a caller that hears
 * "done" has its write on disk (the store runs `synchronous = FULL`). A batch whose commit fails
 * (disk full, I/O error) fails every request in it, none acknowledged.
 *
 * The overdraft checks and every read-check-write run inside the batch, each seeing the ones
 * before it, and the batch itself takes the write lock up front (BEGIN IMMEDIATE), so the
 * guarantees of one-transaction-per-request hold against other processes on the same file too.
 */
const MAX_BATCH = config.store.maxWriteBatch

/** A write transaction waiting for its batch: its function and how to answer its caller. */
export interface Job {
  fn: (trx: Kysely<any>) => Promise<unknown>
  /** The write may skip the sync to disk at commit (WriteOptions.durability): it still survives a crash of the process. */
  relaxed?: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** What one request of a batch came to. */
export type Outcome = {ok: true; value: unknown} | {ok: false; error: unknown}

/**
 * Answers a batch's callers once its commit has returned: each with its own outcome, or all with
 * `failed` when the batch did not commit (nothing in it reached the store: nobody may be told
 * otherwise). Both group writers (this one and postgres/writer.ts) end a batch here.
 */
export function settle(batch: readonly Pick<Job, 'resolve' | 'reject'>[], outcomes: readonly Outcome[] | {failed: unknown}): void {
  if ('failed' in outcomes) {
    for (const job of batch) job.reject(outcomes.failed)
    return
  }
  for (const [index, job] of batch.entries()) {
    const outcome = outcomes[index]!
    if (outcome.ok) job.resolve(outcome.value)
    else job.reject(outcome.error)
  }
}

/** Counts since the writer started, for operators and the benchmark. */
export interface WriterStats {
  /** Write transactions requested. */
  writes: number
  /** Transactions committed to the store (each one sync). */
  commits: number
  /** PostgreSQL: batches rolled back and run again after a serialization failure or deadlock. */
  reruns: number
  /**
   * Told of each commit: how long the COMMIT took, in seconds, and how many write transactions it
   * carried. The store's metrics listen here (src/instrument.ts); nothing listens in a command.
   */
  onCommit?: ((seconds: number, transactions: number) => void) | undefined
}

/** Each request's savepoint statements, made once: a batch runs two per request. */
const savepoints: {open: CompiledQuery; release: CompiledQuery}[] = []
function savepointOf(index: number) {
  savepoints[index] ??= {open: CompiledQuery.raw(`savepoint request_${index}`), release: CompiledQuery.raw(`release request_${index}`)}
  return savepoints[index]!
}

const SYNC_FULL = CompiledQuery.raw('pragma synchronous = FULL')
const SYNC_NORMAL = CompiledQuery.raw('pragma synchronous = NORMAL')

/** Connections handed to a batch: a write transaction asked for on one runs nested, in place. */
const batchConnections = new WeakSet<object>()

export class GroupWriter {
  private queue: Job[] = []
  private running = false
  readonly stats: WriterStats = {writes: 0, commits: 0, reruns: 0}
  /** Transactions submitted so far: the last one's number (SetWriter keeps the writer's order by it). */
  tickets = 0

  constructor(private readonly db: Kysely<any>) {}

  /** Whether the connection's commits sync now: FULL unless a batch of relaxed writes turned it to NORMAL. */
  private syncing: 'FULL' | 'NORMAL' = 'FULL'

  run<T>(fn: (trx: Kysely<any>) => Promise<T>, relaxed = false): Promise<T> {
    this.stats.writes++
    this.tickets++
    return new Promise<T>((resolve, reject) => {
      this.queue.push({fn, relaxed, resolve: resolve as (value: unknown) => void, reject})
      if (!this.running) {
        this.running = true
        // The rest of this turn's requests join the batch before it starts.
        setImmediate(() => void this.drain())
      }
    })
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH)
      await this.commit(batch)
    }
    this.running = false
  }

  private async commit(batch: Job[]): Promise<void> {
    let outcomes: Outcome[] = []
    try {
      await this.db.connection().execute(async (conn) => {
        batchConnections.add(conn)
        inheritContext(conn, this.db)
        // SQLite: the savepoints go straight to the connection the batch holds (prepared.ts).
        const direct = contextOf(conn)?.direct
        const run = direct ? async (query: CompiledQuery) => void direct(query.sql, query.parameters) : async (query: CompiledQuery) => void (await conn.executeQuery(query))
        // A batch of relaxed writes alone commits without the sync (WAL, synchronous NORMAL: the
        // commit reaches the OS, so a crash of the process keeps it; a power cut may take the
        // last ones). One durable write in the batch makes the whole commit sync.
        const syncing = batch.every((job) => job.relaxed) ? 'NORMAL' : 'FULL'
        if (syncing !== this.syncing) {
          await run(syncing === 'FULL' ? SYNC_FULL : SYNC_NORMAL)
          this.syncing = syncing
        }
        await sql`begin immediate`.execute(conn)
        try {
          outcomes = await runJobs(conn, batch, run)
          const committing = performance.now()
          await sql`commit`.execute(conn)
          this.stats.commits++
          this.stats.onCommit?.((performance.now() - committing) / 1000, batch.length)
        } catch (error) {
          await sql`rollback`.execute(conn).catch(() => undefined)
          throw error
        }
      })
    } catch (error) {
      settle(batch, {failed: error})
      return
    }
    settle(batch, outcomes)
  }
}

/** Runs each job of a batch in a savepoint of its own, inside the batch's transaction: one job's failure is its own. */
async function runJobs(conn: Kysely<any>, batch: readonly Job[], run: (query: CompiledQuery) => Promise<void>): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  for (const [index, job] of batch.entries()) {
    const savepoint = sql.id(`request_${index}`)
    const statements = savepointOf(index)
    await run(statements.open)
    try {
      const value = await job.fn(conn)
      await run(statements.release)
      outcomes.push({ok: true, value})
    } catch (error) {
      // A store failure may have ended the whole transaction (SQLite rolls back on some
      // I/O and disk-full errors); then the savepoint is gone and the batch fails as one.
      await sql`rollback to ${savepoint}`.execute(conn).catch(() => {
        throw error
      })
      await sql`release ${savepoint}`.execute(conn)
      outcomes.push({ok: false, error})
    }
  }
  return outcomes
}

/**
 * A kind of write decided and written as a set on SQLite (the ledger's withdrawals): `run` gets
 * everything queued for it when its turn in the group writer comes, on the batch's connection,
 * inside the batch's transaction (which holds the write lock), and answers each input. If the
 * set fails as a whole (a statement failed, or the commit did), `abandon` is told and each input
 * runs again `alone`, as a write transaction of its own, so one bad request fails alone and
 * nobody hears of a write that did not commit.
 */
export interface SetRunner {
  /** `db` is the store handle the set was submitted on (what anything kept between sets is kept by). */
  run(conn: Kysely<any>, inputs: readonly unknown[], db: Kysely<any>): Promise<Outcome[]>
  abandon(db: Kysely<any>): void
  alone(db: Kysely<any>, input: unknown): Promise<unknown>
}

interface Queued {
  input: unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** One set: what joined it, and whether its turn in the group writer has come. */
interface OpenSet {
  entries: Queued[]
  /** The group writer's ticket of the set's transaction (GroupWriter.tickets). */
  ticket: number
  started: boolean
}

/**
 * The queue of one SetRunner on one store (SQLite). A request joins the set waiting for its turn
 * in the group writer while nothing else was submitted to the writer after that set; otherwise
 * (or once the set has started, or is full) it opens the next set. So everything that arrives
 * while a batch commits goes together, and the writer's order holds: a write submitted before a
 * request is decided before it, one submitted after it is decided after it.
 */
class SetWriter {
  private open: OpenSet | undefined

  constructor(
    private readonly db: Kysely<any>,
    private readonly runner: SetRunner,
  ) {}

  submit<T>(input: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const writer = writerOf(this.db)
      const set = this.open
      const joinable = set !== undefined && !set.started && set.ticket === writer.tickets && set.entries.length < MAX_BATCH
      ;(joinable ? set : this.start(writer)).entries.push({input, resolve: resolve as (value: unknown) => void, reject})
    })
  }

  private start(writer: GroupWriter): OpenSet {
    const set: OpenSet = {entries: [], ticket: 0, started: false}
    this.open = set
    const begin = () => {
      set.started = true
      if (this.open === set) this.open = undefined
    }
    writer
      .run<Outcome[]>(async (conn) => {
        begin()
        // Counted as the writes they are (WriterStats.writes), not as the one transaction they share.
        writer.stats.writes += set.entries.length - 1
        return this.runner.run(
          conn,
          set.entries.map((one) => one.input),
          this.db,
        )
      })
      .then(
        (outcomes) => settle(set.entries, outcomes),
        () => {
          // The set failed whole, or its batch did (then it may never have run): nothing of it
          // committed. Each request runs again on its own.
          begin()
          this.runner.abandon(this.db)
          for (const one of set.entries) this.runner.alone(this.db, one.input).then(one.resolve, one.reject)
        },
      )
    set.ticket = writer.tickets
    return set
  }
}

/** The SQLite set writer of `runner` on a store handle, made on first use. */
export const setWriterOf: (db: Kysely<any>, runner: SetRunner) => SetWriter = perHandleAndKey((db, runner) => new SetWriter(db, runner))

const writers = new WeakMap<object, GroupWriter>()

/** The writer of a store handle, made on first use. */
export function writerOf(db: Kysely<any>): GroupWriter {
  let writer = writers.get(db)
  if (!writer) {
    writer = new GroupWriter(db)
    writers.set(db, writer)
  }
  return writer
}

/** Marks a connection running a write transaction outside the group writer (PostgreSQL's). */
export function markWriting(conn: Kysely<any>): void {
  batchConnections.add(conn)
}

/** True for the connection of a running batch, where a further write transaction nests. */
export function inBatch(db: Kysely<any>): boolean {
  return batchConnections.has(db)
}

/** A write transaction inside a batch's request: a savepoint of its own within that request's. */
export async function nested<T>(conn: Kysely<any>, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
  const savepoint = sql.id(`nested_${Math.random().toString(36).slice(2)}`)
  await sql`savepoint ${savepoint}`.execute(conn)
  try {
    const value = await fn(conn)
    await sql`release ${savepoint}`.execute(conn)
    return value
  } catch (error) {
    await sql`rollback to ${savepoint}`.execute(conn)
    await sql`release ${savepoint}`.execute(conn)
    throw error
  }
}
