import {sql, type Kysely, type RawBuilder} from 'kysely'
import {inheritContext} from './context.js'
import {beginRead, storeKind} from './dialect.js'
import {onStoreClose} from './handle.js'
import {config} from '../config.js'
import {type BatchRunner, postgresSetWriterOf, postgresWriterOf, postgresWriteStats} from './postgres/writer.js'
import {inBatch, nested, type SetRunner, setWriterOf, writerOf, type WriterStats} from './writer.js'

/*
 * Transactions on a store, whichever its kind: the one entry for writes (the group writers of
 * writer.ts and postgres/writer.ts stand behind it), so no interface imports a driver module.
 */

export {type BatchRunner, savepointRunner} from './postgres/writer.js'

/**
 * Submits a request to the PostgreSQL writer whose batches `runner` runs as a set (read committed;
 * see postgres/writer.ts postgresSetWriterOf): for a kind of write that is locked, read and
 * written in a few statements per batch, whatever its size. Only for a PostgreSQL store.
 */
export function submitToSetWriter<T>(db: Kysely<any>, runner: BatchRunner, input: unknown, lockOrder?: number): Promise<T> {
  return postgresSetWriterOf(db, runner).submit<T>(input, lockOrder)
}

export type {SetRunner} from './writer.js'

/**
 * Submits a request to the SQLite writer whose sets `runner` decides and writes together, as one
 * write transaction of the group writer's batch (writer.ts SetWriter). Only for a SQLite store.
 */
export function submitToSqliteSetWriter<T>(db: Kysely<any>, runner: SetRunner, input: unknown): Promise<T> {
  return setWriterOf(db, runner).submit<T>(input)
}

/** How writeTransaction runs a transaction. */
export interface WriteOptions {
  /**
   * PostgreSQL only. `read committed` is for a transaction that takes row locks itself
   * (lockForUpdate, advisory locks) before it reads what it decides on: a hot row (one account hit by
   * many withdrawals at once) then queues its writers instead of failing them into retries, and
   * each statement after the lock sees the latest committed rows. Default: serializable.
   */
  isolation?: 'serializable' | 'read committed'
  /**
   * PostgreSQL only: the key of the row the transaction locks first (a withdrawal's member id).
   * Transactions with one key share a writer lane, and a batch runs them in key order, so
   * concurrent batches take their row locks in one order and never deadlock.
   */
  lockOrder?: number
  /**
   * `relaxed`: the write need not be synced to disk before it is acknowledged (SQLite: a batch of
   * such writes alone commits with synchronous NORMAL; PostgreSQL commits it as any other). It
   * survives a crash of the process, not a power cut. Only for records whose loss in a power cut
   * costs nothing that matters: the spent DPoP proofs, which expire a minute later anyway, and
   * interface E's records of summary calls, which spend no allowance.
   */
  durability?: 'durable' | 'relaxed'
}

/**
 * Runs `fn` as one write transaction and resolves once it is durably committed. It goes through
 * the store's group-commit writer (writer.ts; postgres/writer.ts on PostgreSQL): `fn` runs in its
 * own savepoint inside a batch that holds the write lock from the start (SQLite BEGIN IMMEDIATE,
 * PostgreSQL a table lock every process's batches take), so a read-check-write sequence can never
 * interleave with another writer, in this process or another one on the same store. If `fn`
 * throws, its writes roll back and the error comes back here; the rest of the batch commits. On
 * PostgreSQL a batch that meets a serialization failure or deadlock runs again whole, so `fn` must
 * only touch the database.
 */
export function writeTransaction<T, DB>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>, options: WriteOptions = {}): Promise<T> {
  if (inBatch(db)) return nested(db, fn as (trx: Kysely<any>) => Promise<T>)
  if (storeKind(db) === 'postgres') return postgresWriterOf(db, options.isolation ?? 'serializable').run(fn as (trx: Kysely<any>) => Promise<T>, options.lockOrder)
  return writerOf(db).run(fn as (trx: Kysely<any>) => Promise<T>, options.durability === 'relaxed')
}

/** A write nobody waits for (writeLater), held until its batch is written. */
interface LaterWrite {
  fn: (trx: Kysely<any>) => Promise<unknown>
  relaxed: boolean
  failed: (error: unknown) => void
  reported?: boolean
}

/** A store handle's writes nobody waits for: those held, the timer that writes them, the batches being written. */
interface LaterWrites {
  held: LaterWrite[]
  timer: ReturnType<typeof setTimeout> | undefined
  writing: Set<Promise<void>>
}

const laterWrites = new WeakMap<object, LaterWrites>()

/**
 * A write transaction nobody is answered from (interface E's summary calls' records): its commit
 * need not stand between a caller and its answer. It is held for `config.store.laterWritesMs`
 * with every other such write that comes meanwhile, then all are written in one transaction
 * through the group writer, each in a savepoint of its own (one that fails goes to its `failed`
 * alone; there is no caller left to hear it). A batch of relaxed writes only is committed without
 * its own sync (WriteOptions.durability). `writesSettled` writes what is held at once and waits;
 * serve's stop and the handle's close both call it, so a clean stop loses none. A crash of the
 * process may lose what was held or being written.
 */
export function writeLater<DB>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<unknown>, options: WriteOptions, failed: (error: unknown) => void): void {
  let state = laterWrites.get(db)
  if (!state) {
    const created: LaterWrites = {held: [], timer: undefined, writing: new Set()}
    state = created
    laterWrites.set(db, created)
    onStoreClose(db as Kysely<any>, () => settleLater(db as Kysely<any>, created))
  }
  state.held.push({fn: fn as LaterWrite['fn'], relaxed: options.durability === 'relaxed', failed})
  if (state.timer === undefined) {
    const held = state
    // Unreferenced: held records alone keep no process alive; a stop or a close writes them.
    state.timer = setTimeout(() => void writeHeld(db as Kysely<any>, held), config.store.laterWritesMs).unref()
  }
}

/** Writes what `state` holds now, in one transaction; resolves once it has committed or failed. */
function writeHeld(db: Kysely<any>, state: LaterWrites): Promise<void> {
  clearTimeout(state.timer)
  state.timer = undefined
  const batch = state.held.splice(0)
  if (batch.length === 0) return Promise.resolve()
  const report = (write: LaterWrite, error: unknown) => {
    if (write.reported) return
    write.reported = true
    write.failed(error)
  }
  const written = writeTransaction(
    db,
    async (trx) => {
      // Each in a savepoint of its own (a write transaction inside a batch nests).
      for (const write of batch) await writeTransaction(trx, write.fn).catch((error: unknown) => report(write, error))
    },
    {durability: batch.every((write) => write.relaxed) ? 'relaxed' : 'durable'},
  ).catch((error: unknown) => {
    for (const write of batch) report(write, error)
  })
  state.writing.add(written)
  void written.finally(() => state.writing.delete(written))
  return written
}

async function settleLater(db: Kysely<any>, state: LaterWrites): Promise<void> {
  while (state.held.length > 0 || state.writing.size > 0) await Promise.all([writeHeld(db, state), ...state.writing])
}

/** Writes at once what writeLater holds for `db`, and resolves once every such write has committed or failed. */
export async function writesSettled(db: Kysely<any>): Promise<void> {
  const state = laterWrites.get(db)
  if (state) await settleLater(db, state)
}

/** Write transactions asked for and commits made through this process's writer(s) of `db`. */
export function writeStats(db: Kysely<any>): WriterStats {
  return storeKind(db) === 'postgres' ? postgresWriteStats(db) : writerOf(db).stats
}

/**
 * Runs `fn` in a deferred (read) transaction on one connection: one consistent snapshot for
 * several statements, without taking the write lock.
 */
export function readTransaction<T, DB>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return runTransaction(db, beginRead(storeKind(db)), fn)
}

async function runTransaction<T, DB>(db: Kysely<DB>, begin: RawBuilder<unknown>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    inheritContext(conn, db)
    await begin.execute(conn)
    try {
      const result = await fn(conn)
      await sql`commit`.execute(conn)
      return result
    } catch (error) {
      await sql`rollback`.execute(conn)
      throw error
    }
  })
}
