import {CompiledQuery, type Kysely} from 'kysely'
import {contextOf, inheritContext} from '../context.js'
import {isRetryableConflict} from '../dialect.js'
import {type Job, markWriting, type Outcome, settle, type WriterStats} from '../writer.js'
import {config} from '../../config.js'
import {perHandleAndKey} from '../per-handle.js'

/**
 * Group commit on PostgreSQL: what SQLite's writer (../writer.ts) does, adapted. The write
 * transactions of one event-loop turn run in one transaction on one connection, each in its own
 * savepoint, in arrival order, with one COMMIT; nobody is answered before that COMMIT returns, and
 * a batch whose COMMIT fails fails every request in it. A request that fails a rule rolls back to
 * its savepoint alone and the rest commit.
 *
 * Requests asking for different isolation levels cannot share a BEGIN, so a store handle has one
 * writer per level (serializable, the default, and read committed for the transactions that lock
 * their rows themselves).
 *
 * Serializable batches never overlap, in this process or any other: each opens with LOCK TABLE on
 * store_write_lock (EXCLUSIVE mode: plain reads go on), as SQLite's BEGIN IMMEDIATE takes its
 * write lock. The lock is taken before the transaction's first snapshot, so a SERIALIZABLE batch
 * sees everything the batch before it committed and does not fail on it.
 *
 * Read-committed batches (the writes that lock what they decide on themselves: withdrawals lock
 * the account row and the Idempotency-Key) do not take it: their row locks keep them correct, and
 * one process runs up to `config.store.postgresWriteLanes` of them at once, each on a connection
 * of its own. A request that names the row it locks first (`lockOrder`, a withdrawal's member id)
 * always goes to the lane of that key, so this process's lanes never wait on each other's rows,
 * and every batch runs its requests in ascending key order, so batches of different processes
 * take their row locks in one order and never deadlock (they may still queue on a shared row).
 * How a batch's requests run is its BatchRunner's business: each in a savepoint by default, or as
 * a set (interfaces/balance/service.ts decides a batch of withdrawals in four round trips).
 *
 * A batch takes its requests from the queue only once its BEGIN (and any lock that BEGIN takes)
 * has returned, so whatever queued while it waited joins it. That is what makes a runner's
 * cluster lanes (BatchRunner.clusterLanes) pay: lane i of every process takes one advisory lock
 * with its BEGIN, so the processes' batches of that lane take turns, and each holds everything
 * its process queued during the others' turns. Without the turns, every process's lane commits
 * side by side and splits the same requests into ever smaller batches as processes are added
 * (bench:balance --processes 1,2,3, docs/benchmarks.md).
 *
 * A serialization failure (40001) or deadlock (40P01) anywhere in a batch, in a request or at the
 * COMMIT, can only come from a writer outside the batches (a one-statement write with no
 * transaction of its own). Then the whole batch is rolled back and run again, every request from
 * the start; after CONFLICT_ATTEMPTS attempts every request gets the last conflict, which callers
 * answer as a busy store (503). A request's function may therefore run more than once and must
 * only touch the database, as before.
 */

/** Attempts of one batch before a run of conflicts is reported as a busy store (config.ts says why 12). */
export const CONFLICT_ATTEMPTS = config.store.postgresConflictAttempts

/** Requests per batch: few enough that a batch's savepoints never overflow PostgreSQL's subtransaction cache (config.ts). */
export const MAX_BATCH = config.store.postgresMaxWriteBatch

export type Isolation = 'serializable' | 'read committed'

/** A conflict that ends the attempt: the batch runs again from its BEGIN. */
class Retry {
  constructor(readonly error: unknown) {}
}

// Statements without parameters go in PostgreSQL's simple protocol, where one message may carry
// several: the savepoint of the next request rides with the release of the one before, and the
// first with BEGIN and the lock, so a request costs one round trip more than its own statements.
const raw = (text: string) => CompiledQuery.raw(text)
const BEGIN = {
  serializable: raw('begin isolation level serializable; lock table store_write_lock in exclusive mode; savepoint request'),
  'read committed': raw('begin isolation level read committed; savepoint request'),
}
const NEXT = raw('release request; savepoint request')
const UNDO = raw('rollback to request')
const COMMIT = raw('release request; commit')
const ROLLBACK = raw('rollback')

/** A job that may name the row it locks first, for its lane and its place in the batch; `input` is for a set runner. */
export type KeyedJob = Job & {lockOrder: number | undefined; input?: unknown}

/**
 * How the requests of a batch run inside its transaction. The writer opens the transaction with
 * `begin`, calls `run` (which answers each request with an outcome, or throws to fail or rerun the
 * whole batch) and commits with `commit`; it owns the queueing, the lanes, the reruns after a
 * conflict and the answers.
 */
export interface BatchRunner {
  begin: Record<Isolation, CompiledQuery>
  commit: CompiledQuery
  run(conn: Kysely<any>, batch: readonly KeyedJob[]): Promise<Outcome[]>
  /**
   * Set for a kind of batch whose lanes should take turns across every process on the database
   * (a small number, unique among runners): lane i's batch in any process first takes the
   * transaction-scoped advisory lock (LANE_LOCKS, clusterLanes * 1000 + i) with its BEGIN, so one
   * such batch per lane runs at a time in the whole cluster, and the requests that queue in a
   * process while another commits join that process's next batch instead of making small ones.
   */
  clusterLanes?: number
}

/** The first key of the advisory locks that cluster lanes take (pg_advisory_xact_lock's int4 pair): "medp". */
const LANE_LOCKS = 0x6d656470

/**
 * The general runner: each request's function in a savepoint of its own, one after another; a
 * request that fails rolls back to its savepoint alone. Costs one round trip per request on top
 * of the request's own statements.
 */
export const savepointRunner: BatchRunner = {
  begin: BEGIN,
  commit: COMMIT,
  async run(conn, batch) {
    const outcomes: Outcome[] = []
    for (const [index, job] of batch.entries()) {
      if (index > 0 && outcomes[index - 1]!.ok) await conn.executeQuery(NEXT)
      try {
        outcomes.push({ok: true, value: await job.fn(conn)})
      } catch (error) {
        if (isRetryableConflict(error)) throw error
        // ROLLBACK TO keeps the savepoint, so the next request starts in it. A failure that
        // ended the whole transaction (the connection is gone) fails the batch as one.
        await conn.executeQuery(UNDO).catch(() => {
          throw error
        })
        outcomes.push({ok: false, error})
      }
    }
    return outcomes
  },
}

function unsupported(): never {
  throw new Error('a request submitted with an input runs only in a set runner')
}

/** Jobs that name no row first, in arrival order, then the rest by key; the sort is stable, so one key keeps arrival order. */
function inLockOrder(batch: KeyedJob[]): KeyedJob[] {
  const rank = (job: KeyedJob) => job.lockOrder ?? Number.NEGATIVE_INFINITY
  return batch.sort((a, b) => (rank(a) === rank(b) ? 0 : rank(a) < rank(b) ? -1 : 1))
}

export class PostgresWriter {
  /** One queue per lane; a lane runs its batches one after another. */
  private readonly queues: KeyedJob[][]
  private readonly busy: boolean[]
  /** Each lane's BEGIN: the runner's, with the lane's cluster lock when the runner asks for one. */
  private readonly begins: CompiledQuery[]
  constructor(
    private readonly db: Kysely<any>,
    isolation: Isolation,
    readonly stats: WriterStats,
    lanes: number,
    private readonly runner: BatchRunner = savepointRunner,
  ) {
    this.queues = Array.from({length: lanes}, () => [])
    this.busy = Array.from({length: lanes}, () => false)
    const begin = runner.begin[isolation]
    this.begins = this.queues.map((_, lane) => (runner.clusterLanes === undefined ? begin : withLaneLock(begin, runner.clusterLanes * 1000 + lane)))
  }

  /**
   * Queues `fn` for a batch. `lockOrder` is the key of the row it locks first (a withdrawal's
   * member id): jobs with the same key always go to the same lane, so two lanes of this process
   * never wait on each other's rows, and each batch runs its jobs in ascending key order, so
   * batches of different processes take their row locks in one order and cannot deadlock.
   */
  run<T>(fn: (trx: Kysely<any>) => Promise<T>, lockOrder?: number): Promise<T> {
    return this.enqueue({fn, lockOrder})
  }

  /** Queues a request for a set runner: `input` is what the runner reads, `lockOrder` as for run(). */
  submit<T>(input: unknown, lockOrder?: number): Promise<T> {
    return this.enqueue({fn: unsupported, lockOrder, input})
  }

  private enqueue<T>(job: Pick<KeyedJob, 'fn' | 'lockOrder' | 'input'>): Promise<T> {
    this.stats.writes++
    const {lockOrder} = job
    const lanes = this.queues.length
    // Jobs that name no row share the first lane, so one turn's of them still make one batch.
    const lane = lockOrder === undefined ? 0 : Math.abs(Math.trunc(lockOrder)) % lanes
    return new Promise<T>((resolve, reject) => {
      this.queues[lane]!.push({...job, resolve: resolve as (value: unknown) => void, reject})
      if (!this.busy[lane]) {
        this.busy[lane] = true
        // The rest of this turn's requests join the batch before it starts.
        setImmediate(() => void this.lane(lane))
      }
    })
  }

  /** One lane: batches from its queue, one after another, until it is empty. */
  private async lane(lane: number): Promise<void> {
    const queue = this.queues[lane]!
    try {
      while (queue.length > 0) await this.commit(lane, queue)
    } finally {
      this.busy[lane] = false
    }
  }

  /**
   * One batch of the lane. Its requests are taken from the queue once the BEGIN (with any lock it
   * takes) has returned, not before: what queued while the connection was fetched and the lock
   * waited for joins this batch. A rerun after a conflict runs the same requests again.
   */
  private async commit(lane: number, queue: KeyedJob[]): Promise<void> {
    let batch: KeyedJob[] | undefined
    const taken = () => {
      batch ??= inLockOrder(queue.splice(0, MAX_BATCH))
      return batch
    }
    let outcomes: Outcome[]
    try {
      outcomes = await this.attempts(lane, taken)
    } catch (error) {
      settle(taken(), {failed: error})
      return
    }
    settle(taken(), outcomes)
  }

  private async attempts(lane: number, taken: () => KeyedJob[]): Promise<Outcome[]> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.attempt(lane, taken)
      if (!(result instanceof Retry)) return result
      if (attempt >= CONFLICT_ATTEMPTS) throw result.error
      this.stats.reruns++
      // Back off a little, growing and jittered, so the same transactions do not collide again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)))
    }
  }

  /** One run of the lane's batch: its outcomes once committed, or Retry after a conflict (rolled back). */
  private attempt(lane: number, taken: () => KeyedJob[]): Promise<Outcome[] | Retry> {
    return this.db.connection().execute(async (conn) => {
      markWriting(conn)
      inheritContext(conn, this.db)
      try {
        await conn.executeQuery(this.begins[lane]!)
        const batch = taken()
        const outcomes = await this.runner.run(conn, batch)
        const committing = performance.now()
        await conn.executeQuery(this.runner.commit)
        this.stats.commits++
        this.stats.onCommit?.((performance.now() - committing) / 1000, batch.length)
        return outcomes
      } catch (error) {
        // After a failed COMMIT the transaction is already over, and ROLLBACK only warns.
        await conn.executeQuery(ROLLBACK).catch(() => undefined)
        if (error instanceof Retry) return error
        if (isRetryableConflict(error)) return new Retry(error)
        throw error
      }
    })
  }
}

/** `begin` with the advisory lock of one cluster lane taken right after its BEGIN (before any savepoint, which would release it on rollback). */
function withLaneLock(begin: CompiledQuery, lane: number): CompiledQuery {
  const [first, ...rest] = begin.sql.split(';')
  if (!first?.trim().toLowerCase().startsWith('begin')) throw new Error(`a cluster lane needs a BEGIN first: ${begin.sql}`)
  return raw([first, ` select pg_advisory_xact_lock(${LANE_LOCKS}, ${lane})`, ...rest].join(';'))
}

/** The read-committed lanes of a handle: as it was opened with (StoreOptions.writeLanes), else the default. */
function lanesOf(db: Kysely<any>): number {
  return contextOf(db)?.writeLanes ?? config.store.postgresWriteLanes
}

const writers = new WeakMap<object, {writers: Record<Isolation, PostgresWriter>; stats: WriterStats}>()

function writersOf(db: Kysely<any>) {
  let entry = writers.get(db)
  if (!entry) {
    const stats: WriterStats = {writes: 0, commits: 0, reruns: 0}
    entry = {
      stats,
      writers: {
        // Serializable batches take the store-wide lock, so one at a time is all they can run.
        serializable: new PostgresWriter(db, 'serializable', stats, 1),
        'read committed': new PostgresWriter(db, 'read committed', stats, lanesOf(db)),
      },
    }
    writers.set(db, entry)
  }
  return entry
}

/**
 * A read-committed writer of a handle whose batches `runner` runs as a set (made on first use; its
 * counts join the handle's): for a kind of request whose batch can be locked, read and written in
 * a few statements whatever its size, where the savepoint runner pays round trips per request.
 */
export const postgresSetWriterOf: (db: Kysely<any>, runner: BatchRunner) => PostgresWriter = perHandleAndKey(
  (db, runner) => new PostgresWriter(db, 'read committed', writersOf(db).stats, lanesOf(db), runner),
)

/** The writer of a PostgreSQL store handle for one isolation level, made on first use. */
export function postgresWriterOf(db: Kysely<any>, isolation: Isolation): PostgresWriter {
  return writersOf(db).writers[isolation]
}

/** Write transactions asked for and commits made by both writers of a handle. */
export function postgresWriteStats(db: Kysely<any>): WriterStats {
  return writersOf(db).stats
}
