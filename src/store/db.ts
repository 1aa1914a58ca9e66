import {Kysely, SqliteDialect, sql, type Dialect, type RawBuilder} from 'kysely'
import {writeFileSync} from 'node:fs'
import type {Database} from './database.js'
import {checkSchema, migrateToLatest, SERVICE_SCHEMA, type Schema} from './migrate.js'
import {sqliteDriverName} from './runtime.js'
import {openBetterSqlite3} from './sqlite/better-sqlite3.js'
import {withStatementCache, type OpenOptions, type SqliteHandle} from './sqlite/handle.js'
import {openNodeSqlite} from './sqlite/node-sqlite.js'
import {inBatch, nested, writerOf, type WriterStats} from './writer.js'
import {contextOf, inheritContext, setContext} from './context.js'
import {loadKeyring, seal, unseal, type Keyring} from './secrets.js'

export type StoreKind = 'sqlite' | 'postgres'

export interface StoreOptions {
  /** SQLite file path; ':memory:' for a private in-memory store (tests). */
  file?: string
  /** A database URL; `postgres://` selects PostgreSQL, `sqlite:` / `file:` a SQLite file. */
  url?: string
  /**
   * Open without write access (a store file the process may only read): nothing is migrated, and
   * a store that is not at this release's schema is refused.
   */
  readonly?: boolean
  /**
   * Also open a read-only connection for plain reads (see `readerOf`): what `serve` does, so reads
   * are answered while the writer's connection is busy with a batch. Ignored for in-memory stores.
   */
  reader?: boolean
}

export interface Store<DB = Database> {
  db: Kysely<DB>
  kind: StoreKind
  close(): Promise<void>
}

/**
 * A new store file is created readable by its owner only (0600) before SQLite opens it; SQLite
 * gives its -wal and -shm files the same mode. An existing file keeps the mode it has.
 */
function createPrivately(file: string): void {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return
  try {
    writeFileSync(file, '', {mode: 0o600, flag: 'wx'})
  } catch (error) {
    // EEXIST: an existing store. Anything else (no such directory, no permission) is left for
    // SQLite to report in its own words, with the path.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return
  }
}

/**
 * The single place that picks a store. SQLite runs in-process on the runtime's SQLite library
 * (see runtime.ts); PostgreSQL plugs in here too.
 */
async function createDialect(options: StoreOptions): Promise<{dialect: Dialect; kind: StoreKind; where: string; file?: string; version?: () => number}> {
  const url = options.url
  if (url && /^postgres(ql)?:\/\//i.test(url)) {
    throw new Error('PostgreSQL stores are not supported by this build yet; use --db PATH for SQLite')
  }
  let file = options.file ?? ':memory:'
  if (url) {
    const match = /^(?:sqlite|file):(?:\/\/)?(.+)$/i.exec(url)
    if (!match?.[1]) throw new Error(`unsupported database URL "${url}" (expected sqlite:PATH or postgres://…)`)
    file = match[1]
  }
  const handle = withStatementCache(await openSqlite(file, {readonly: options.readonly ?? false}))
  return {dialect: new SqliteDialect({database: handle}), kind: 'sqlite', where: file, file, version: handle.version}
}

/** Opens a SQLite file on this runtime's driver, with the settings every connection runs with. */
export async function openSqlite(file: string, options: OpenOptions = {}): Promise<SqliteHandle> {
  const driver = sqliteDriverName()
  if (!options.readonly) createPrivately(file)
  let handle: SqliteHandle
  try {
    handle = driver === 'node:sqlite' ? await openNodeSqlite(file, options) : await openBetterSqlite3(file, options)
  } catch (error) {
    throw new Error(`cannot open ${file}: ${(error as Error).message}`)
  }
  try {
    handle.exec('pragma busy_timeout = 5000')
    if (!options.readonly) {
      handle.exec('pragma journal_mode = WAL')
      // FULL: a commit is on disk (the WAL synced) before it returns, so nothing medpanel has
      // acknowledged is lost to a power cut. The group-commit writer keeps that to one sync per
      // batch of requests. Read-only connections never commit and keep the default.
      handle.exec('pragma synchronous = FULL')
    }
    handle.exec('pragma foreign_keys = ON')
    // 4 MB of page cache per connection (SQLite's builds default to 2-16 MB): the OS keeps the
    // file's pages cached anyway, and a streamed 17 MB pulse export then stays within its budget.
    handle.exec('pragma cache_size = -4000')
  } catch (error) {
    handle.close()
    throw new Error(`cannot open ${file}: ${(error as Error).message}`)
  }
  return handle
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
 * Opens (and migrates) a store: medpanel's own schema by default, or another one (the reference
 * partner keeps its own tables in its own file).
 */
export async function openStore<DB = Database>(options: StoreOptions = {}, schema: Schema = SERVICE_SCHEMA): Promise<Store<DB>> {
  const {dialect, kind, where, version, file} = await createDialect(options)
  const db = new Kysely<DB>({dialect})
  let reader: Kysely<DB> | undefined
  try {
    // Loaded on first use: a store that never seals anything (the reference partner's) gets no key file.
    let keys: Keyring | undefined
    const keyring = () => (keys ??= loadKeyring(file))
    setContext(db, {...(version ? {version} : {}), keyring})
    if (options.readonly) await checkSchema(db, schema, where)
    else await migrateToLatest(db, schema, where, {get keyring() {
      return keyring()
    }})
    if (options.reader && !options.readonly && file !== undefined && file !== ':memory:' && file !== '') {
      const handle = withStatementCache(await openSqlite(file, {readonly: true}))
      reader = new Kysely<DB>({dialect: new SqliteDialect({database: handle})})
      setContext(reader, {version: handle.version, keyring})
      setContext(db, {...(version ? {version} : {}), keyring, reader})
    }
  } catch (error) {
    await reader?.destroy()
    await db.destroy()
    throw error
  }
  return {
    db,
    kind,
    close: async () => {
      await reader?.destroy()
      await db.destroy()
    },
  }
}

/**
 * Runs `fn` as one write transaction and resolves once it is durably committed. It goes through
 * the store's group-commit writer (writer.ts): `fn` runs in its own savepoint inside a batch that
 * holds the write lock from the start (SQLite BEGIN IMMEDIATE), so a read-check-write sequence
 * can never interleave with another writer, in this process or another one on the same file. If
 * `fn` throws, its writes roll back and the error comes back here; the rest of the batch commits.
 */
export function writeTransaction<T, DB = Database>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  if (inBatch(db)) return nested(db, fn as (trx: Kysely<any>) => Promise<T>)
  return writerOf(db).run(fn as (trx: Kysely<any>) => Promise<T>)
}

/** Write transactions asked for and commits made through this process's writer of `db`. */
export function writeStats(db: Kysely<any>): WriterStats {
  return writerOf(db).stats
}

/**
 * Runs `fn` in a deferred (read) transaction on one connection: one consistent snapshot for
 * several statements, without taking the write lock.
 */
export function readTransaction<T, DB = Database>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return runTransaction(db, sql`begin`, fn)
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
