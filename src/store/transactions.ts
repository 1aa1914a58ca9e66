import {sql, type Kysely, type RawBuilder} from 'kysely'
import {inheritContext} from './context.js'
import {beginRead, storeKind} from './dialect.js'
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
