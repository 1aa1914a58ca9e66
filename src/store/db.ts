import {Kysely, SqliteDialect, sql, type Dialect, type RawBuilder} from 'kysely'
import {existsSync} from 'node:fs'
import {isAbsolute, resolve} from 'node:path'
import {environment} from '../config.js'
import {AppError} from '../errors.js'
import {checkSchema, migrateToLatest, type Schema, StoreVersionError} from './migrate.js'
import {withStatementCache, type StatementCacheStats} from './sqlite/handle.js'
import {openSqlite} from './sqlite/open.js'
import {inBatch, nested, writerOf, type WriterStats} from './writer.js'
import {type BatchRunner, postgresSetWriterOf, postgresWriterOf, postgresWriteStats} from './postgres/writer.js'
import {contextOf, inheritContext, setContext, type DirectExecutor, type StoreContext} from './context.js'
import {beginRead, storeKind, type StoreKind} from './dialect.js'
import {openPostgres} from './postgres/open.js'
import {openReplica} from './postgres/replica.js'
import {CacheVersion, listenForChanges, PROBE_CHANNEL, trackCacheWrites} from './postgres/listen.js'
import {loadKeyring, seal, unseal, type Keyring} from './secrets.js'

export {openSqlite}
export {printableUrl} from './postgres/open.js'

export type {StoreKind} from './dialect.js'
// The store's one entry for writes, whichever the dialect: interfaces import no driver module.
export {type BatchRunner, savepointRunner} from './postgres/writer.js'

/**
 * Submits a request to the PostgreSQL writer whose batches `runner` runs as a set (read committed;
 * see postgres/writer.ts postgresSetWriterOf): for a kind of write that is locked, read and
 * written in a few statements per batch, whatever its size. Only for a PostgreSQL store.
 */
export function submitToSetWriter<T>(db: Kysely<any>, runner: BatchRunner, input: unknown, lockOrder?: number): Promise<T> {
  return postgresSetWriterOf(db, runner).submit<T>(input, lockOrder)
}

export interface StoreOptions {
  /** SQLite file path; ':memory:' for a private in-memory store (tests). */
  file?: string
  /**
   * An in-memory SQLite store that starts as a copy of these bytes (`storeImage` of another
   * one): what a new store's migrations would write, without running them again. The tests open
   * hundreds of fresh stores this way. better-sqlite3 only.
   */
  image?: Uint8Array
  /** A database URL; `postgres://` selects PostgreSQL, `sqlite:` / `file:` a SQLite file. */
  url?: string
  /**
   * Open without write access (a store file the process may only read): nothing is migrated, and
   * a store that is not at this release's schema is refused.
   */
  readonly?: boolean
  /**
   * Open to look only (`status`): a SQLite file is opened read-only, as with `readonly`, and on
   * either kind nothing is migrated and the schema is not checked, so a store from an older or
   * newer release can be reported on as it is (migrationStatus). A missing SQLite file is refused,
   * not created. The caller reads in read-only transactions (readTransaction).
   */
  inspect?: boolean
  /**
   * Also open a read-only connection for plain reads (see `readerOf`): what `serve` does, so reads
   * are answered while the writer's connection is busy with a batch. Ignored for in-memory stores.
   */
  reader?: boolean
  /** PostgreSQL only: connections in this process's pool. */
  poolSize?: number
  /**
   * PostgreSQL only: withdrawal batches that run at once across every process on the database
   * (postgres/writer.ts, cluster lanes); config.store.postgresWriteLanes when unset. Every process
   * on one database should be given the same number.
   */
  writeLanes?: number
  /**
   * PostgreSQL only: where the cache listener connects, when `url` goes through a pooler in
   * transaction mode (where LISTEN cannot work): a URL that reaches the same database directly.
   * The listener checks that it hears the store's own notifications there before any caching.
   */
  listenUrl?: string
  /**
   * PostgreSQL only: a hot standby of the same database (postgres/replica.ts), which interface E's
   * searches read from instead of the primary. Refused at open unless it is a replica of the
   * store's own database.
   */
  replicaUrl?: string
}

/**
 * An open store. DB names its tables: src/schema.ts opens one on the whole schema; `Store` without
 * it is a handle whose tables are named where it is used (narrowed, or typed by its user).
 */
export interface Store<DB = any> {
  db: Kysely<DB>
  kind: StoreKind
  close(): Promise<void>
}

/** Whether a database URL names a PostgreSQL store (postgres:// or postgresql://, any case). */
export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url)
}

/** The SQLite file a store's options name (':memory:' when none); undefined for PostgreSQL. */
export function sqliteFileOf(options: Pick<StoreOptions, 'file' | 'url'>): string | undefined {
  const url = options.url
  if (isPostgresUrl(url)) return undefined
  if (!url) return options.file ?? ':memory:'
  const match = /^(?:sqlite|file):(?:\/\/)?(.+)$/i.exec(url)
  if (!match?.[1]) throw new Error(`unsupported database URL "${url}" (expected sqlite:PATH or postgres://…)`)
  return match[1]
}

/**
 * The single place that picks a store. SQLite runs in-process on the runtime's SQLite library
 * (see runtime.ts); PostgreSQL plugs in here too.
 */
async function createDialect(options: StoreOptions): Promise<{
  dialect: Dialect
  kind: StoreKind
  where: string
  file?: string
  version?: () => number | undefined
  cacheStats?: () => StatementCacheStats
  direct?: DirectExecutor
  pool?: StoreContext['pool']
  cacheVersion?: CacheVersion
  serialize?: () => Uint8Array
}> {
  const url = options.url
  if (isPostgresUrl(url)) {
    if (options.readonly) throw new Error('--readonly applies to SQLite store files; give a PostgreSQL role read-only rights instead')
    const {dialect, where, pool} = await openPostgres(url, {poolSize: options.poolSize})
    // Caches on PostgreSQL: see postgres/listen.ts. A store opened to look only caches nothing.
    if (options.inspect) return {dialect, kind: 'postgres', where, pool}
    const cacheVersion = new CacheVersion()
    return {dialect: trackCacheWrites(dialect, cacheVersion), kind: 'postgres', where, pool, cacheVersion}
  }
  const file = sqliteFileOf(options) ?? ':memory:'
  if (options.inspect && file !== ':memory:' && file !== '' && !file.startsWith('file:') && !existsSync(file)) {
    throw new AppError('not_found', `there is no store at ${file} (give the store with --db or --database-url)`)
  }
  if (options.image && file !== ':memory:') throw new Error('a store from an image is an in-memory one: give no file')
  const handle = withStatementCache(await openSqlite(file, {readonly: (options.readonly || options.inspect) ?? false, ...(options.image ? {image: options.image} : {})}))
  // An absolute path: other connections to the same file (E's search threads) must find it whatever their directory.
  const onDisk = file === ':memory:' || file === '' ? undefined : isAbsolute(file) ? file : resolve(file)
  return {
    dialect: new SqliteDialect({database: handle}),
    kind: 'sqlite',
    where: file,
    file: onDisk,
    version: handle.version,
    cacheStats: handle.cacheStats,
    direct: handle.direct,
    ...(handle.serialize ? {serialize: handle.serialize} : {}),
  }
}

const cacheStats = new WeakMap<object, () => StatementCacheStats>()
const images = new WeakMap<object, () => Uint8Array>()
const files = new WeakMap<object, string>()
const closers = new WeakMap<object, (() => Promise<void>)[]>()

/** What the statement cache of the store's connection holds (see withStatementCache). */
export function statementCacheStats(db: Kysely<any>): StatementCacheStats | undefined {
  return cacheStats.get(db)?.()
}

/**
 * The bytes of a SQLite store as it is now, to open copies of it (StoreOptions.image); undefined
 * where the driver cannot serialize (node:sqlite) and on PostgreSQL.
 */
export function storeImage(db: Kysely<any>): Uint8Array | undefined {
  return images.get(db)?.()
}

/**
 * The absolute path of the SQLite file behind a store, for code that opens connections of its
 * own to it (interface E's search threads). Undefined for an in-memory store, which no other
 * connection can reach.
 */
export function storeFile(db: Kysely<any>): string | undefined {
  return files.get(db)
}

/**
 * SQLite: copies the write-ahead log into the store file and empties it (a TRUNCATE checkpoint),
 * so a serve that stopped leaves the whole store in its one file, for a backup or copy taken right
 * after. False when a reader held part of the log back (the next open moves the rest). PostgreSQL
 * (its server checkpoints its own log) and an in-memory store: undefined, nothing done.
 */
export async function checkpointStore(db: Kysely<any>): Promise<boolean | undefined> {
  if (storeKind(db) !== 'sqlite' || storeFile(db) === undefined) return undefined
  const {rows} = await sql<{busy: number}>`pragma wal_checkpoint(TRUNCATE)`.execute(db)
  return rows[0]?.busy === 0
}

/** Runs `fn` when the store is closed, before its connection goes (a search pool stops its threads). */
export function onStoreClose(db: Kysely<any>, fn: () => Promise<void>): void {
  const list = closers.get(db) ?? []
  list.push(fn)
  closers.set(db, list)
}

/**
 * PostgreSQL: whether this process caches now (its listener hears the store's changes); undefined
 * on SQLite, whose caches need no listener.
 */
export function cachesListening(db: Kysely<any>): boolean | undefined {
  return storeKind(db) === 'postgres' ? contextOf(db)?.version?.() !== undefined : undefined
}

/** PostgreSQL: the connections of this process's pool; undefined for SQLite. */
export function poolCounts(db: Kysely<any>): ReturnType<NonNullable<StoreContext['pool']>> | undefined {
  return contextOf(db)?.pool?.()
}

/**
 * A value that changes whenever the store's content may have changed (a write through this
 * handle, or a commit by any other connection), for caches that must never serve stale rows.
 * Undefined where the driver cannot tell; callers then do not cache.
 */
export function storeVersion(db: Kysely<any>): number | undefined {
  return contextOf(db)?.version?.()
}

/**
 * Where a plain read (one statement, or several that need no common snapshot) should go: the
 * store's read-only connection when it has one, else `db` itself. Inside a transaction it is the
 * transaction, so a request sees its own writes.
 */
export function readerOf<DB>(db: Kysely<DB>): Kysely<DB> {
  return (contextOf(db)?.reader as Kysely<DB> | undefined) ?? db
}

/**
 * Where a search that may lag the primary by a moment reads: the store's read replica when it was
 * opened with one (StoreOptions.replicaUrl), else `db` itself.
 */
export function replicaOf<DB>(db: Kysely<DB>): Kysely<DB> {
  return (contextOf(db)?.replica as Kysely<DB> | undefined) ?? db
}

/**
 * A PostgreSQL store's keys: MEDPANEL_SECRET_KEY, which every process on the database must share.
 * There is no file beside the store to keep them in, and keys kept in the database itself would
 * seal nothing.
 */
function postgresKeyring(): Keyring {
  const keys = environment().secretKeys
  if (keys === undefined) {
    throw new Error(
      'a PostgreSQL store needs MEDPANEL_SECRET_KEY (one or more base64 32-byte keys, the same in every process) to seal client secrets; make one with: openssl rand -base64 32',
    )
  }
  return loadKeyring(undefined, keys)
}

/** The keys that seal this store's secrets (see secrets.ts). */
export function keyringOf(db: Kysely<any>): Keyring {
  const context = contextOf(db)
  if (!context) throw new Error('this database handle was not opened by openStore')
  return context.keyring()
}

/** Seals a secret for storage in this store. */
export function sealSecret(db: Kysely<any>, plaintext: string): string {
  return seal(keyringOf(db), plaintext)
}

/** Opens a secret this store holds sealed. */
export function openSecret(db: Kysely<any>, stored: string): string {
  return unseal(keyringOf(db), stored)
}

/**
 * Opens (and migrates) a store with the schema it is given: medpanel's own (composed above the
 * store, in src/schema.ts, whose openStore is what commands and tests call), or another one (the
 * reference partner keeps its own tables in its own file).
 */
export async function openStore<DB>(options: StoreOptions, schema: Schema): Promise<Store<DB>> {
  const {dialect, kind, where, version, file, cacheStats: stats, direct, pool, cacheVersion, serialize} = await createDialect(options)
  const db = new Kysely<DB>({dialect})
  if (stats) cacheStats.set(db, stats)
  if (serialize) images.set(db, serialize)
  if (file) files.set(db, file)
  let reader: Kysely<DB> | undefined
  try {
    // Loaded on first use: a store that never seals anything (the reference partner's) gets no key file.
    let keys: Keyring | undefined
    const keyring = () => (keys ??= kind === 'postgres' ? postgresKeyring() : loadKeyring(file))
    const writeLanes = kind === 'postgres' ? options.writeLanes : undefined
    setContext(db, {kind, ...(version ? {version} : {}), ...(direct ? {direct} : {}), ...(pool ? {pool} : {}), ...(writeLanes ? {writeLanes} : {}), keyring})
    if (options.inspect) {
      // Looked at as it is: see StoreOptions.inspect.
    } else if (options.readonly) await checkSchema(db, schema, where)
    else
      await migrateToLatest(db, schema, where, {
        get keyring() {
          return keyring()
        },
      })
    if (options.reader && !options.readonly && file !== undefined && file !== ':memory:' && file !== '') {
      const handle = withStatementCache(await openSqlite(file, {readonly: true}))
      reader = new Kysely<DB>({dialect: new SqliteDialect({database: handle})})
      setContext(reader, {kind, version: handle.version, keyring})
      setContext(db, {kind, ...(version ? {version} : {}), ...(direct ? {direct} : {}), keyring, reader})
    }
    if (options.replicaUrl !== undefined) {
      if (kind !== 'postgres') throw new AppError('bad_request', 'a read replica applies to a PostgreSQL store only')
      const replica = await openReplica(db, options.replicaUrl, {poolSize: options.poolSize}, (handle) => setContext(handle, {kind, keyring}))
      contextOf(db)!.replica = replica.db
      onStoreClose(db as Kysely<any>, () => replica.db.destroy())
    }
    if (cacheVersion && options.url && schema.notifiesChanges) {
      // Started once the schema (and its triggers) is in place; undefined, so no caching, until it listens.
      const separate = options.listenUrl !== undefined && options.listenUrl !== options.url
      onStoreClose(
        db as Kysely<any>,
        listenForChanges(
          options.listenUrl ?? options.url,
          cacheVersion,
          separate ? {probe: (token) => sql`select pg_notify(${PROBE_CHANNEL}, ${token})`.execute(db).then(() => undefined)} : {},
        ),
      )
      contextOf(db)!.version = cacheVersion.current
    }
  } catch (error) {
    await reader?.destroy()
    await db.destroy()
    // A database that cannot be reached or does not exist: say which, in the operator's terms.
    if (kind === 'postgres' && !(error instanceof StoreVersionError) && typeof (error as {code?: unknown}).code === 'string') {
      throw new Error(`cannot open the PostgreSQL store ${where}: ${(error as Error).message}`)
    }
    throw error
  }
  return {
    db,
    kind,
    close: async () => {
      const pending = closers.get(db) ?? []
      closers.delete(db)
      await Promise.all(pending.map((fn) => fn().catch(() => undefined)))
      await reader?.destroy()
      await db.destroy()
    },
  }
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
   * costs nothing that matters: the spent DPoP proofs, which expire a minute later anyway.
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
