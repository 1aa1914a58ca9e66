import {Kysely, SqliteDialect, sql, type Dialect, type RawBuilder, type SqliteDatabase, type SqliteStatement} from 'kysely'
import type {Database} from './database.js'
import {migrateToLatest, SERVICE_SCHEMA, type Schema} from './migrate.js'

export type StoreKind = 'sqlite' | 'postgres'

export interface StoreOptions {
  /** SQLite file path; ':memory:' for a private in-memory store (tests). */
  file?: string
  /** A database URL; `postgres://` selects PostgreSQL, `sqlite:` / `file:` a SQLite file. */
  url?: string
}

export interface Store<DB = Database> {
  db: Kysely<DB>
  kind: StoreKind
  close(): Promise<void>
}

/**
 * The single place that picks a driver. SQLite runs on better-sqlite3 (synchronous, in-process,
 * ~4 µs point lookups); other drivers (Deno's node:sqlite, PostgreSQL) plug in here.
 */
async function createDialect(options: StoreOptions): Promise<{dialect: Dialect; kind: StoreKind; version?: () => number}> {
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
  const {default: SqliteDatabase} = await import('better-sqlite3')
  let sqlite
  try {
    sqlite = new SqliteDatabase(file)
  } catch (error) {
    throw new Error(`cannot open database ${file}: ${(error as Error).message}`)
  }
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  // 4 MB of page cache per connection (better-sqlite3 builds with 16 MB): the OS keeps the file's
  // pages cached anyway, and a streamed 17 MB pulse export then stays within its memory budget.
  sqlite.pragma('cache_size = -4000')
  const database = withStatementCache(sqlite)
  return {dialect: new SqliteDialect({database}), kind: 'sqlite', version: database.version}
}

/**
 * Kysely prepares every query anew; preparing costs more than running a point lookup. Queries
 * are built with parameters, so the set of distinct SQL texts is small and their statements can
 * be kept. Safe because Kysely's SQLite driver runs one query at a time on its one connection.
 *
 * It also keeps the store's version, a number that changes whenever the content may have: on
 * any statement through it that may write (anything but a plain SELECT), and when SQLite's
 * `PRAGMA data_version` shows another connection (another process) committed.
 */
function withStatementCache(sqlite: import('better-sqlite3').Database, limit = 1000): SqliteDatabase & {version: () => number} {
  const cache = new Map<string, SqliteStatement>()
  const dataVersion = sqlite.prepare('pragma data_version').pluck()
  // The version moves on every statement that may write through this handle, and whenever
  // another connection's commit moved SQLite's data_version. That is looked up once per
  // event-loop turn: a request in this turn sees the store as of the turn's start, as if it had
  // been served a few microseconds earlier.
  let version = 0
  let external = dataVersion.get() as number
  let checked = false
  const recheck = () => (checked = false)
  const wrote = () => version++
  return {
    close: () => sqlite.close(),
    version: () => {
      if (!checked) {
        checked = true
        setImmediate(recheck)
        const now = dataVersion.get() as number
        if (now !== external) {
          external = now
          version++
        }
      }
      return version
    },
    prepare(text: string) {
      let statement = cache.get(text)
      if (!statement) {
        if (cache.size >= limit) cache.clear()
        const prepared = sqlite.prepare(text)
        statement = /^\s*select\b/i.test(text)
          ? prepared
          : {
              reader: prepared.reader,
              all: (parameters) => (wrote(), prepared.all(parameters)),
              run: (parameters) => (wrote(), prepared.run(parameters)),
              iterate: (parameters) => (wrote(), prepared.iterate(parameters)),
            }
        cache.set(text, statement)
      }
      return statement
    },
  }
}

const versions = new WeakMap<object, () => number>()

/**
 * A value that changes whenever the store's content may have changed (a write through this
 * handle, or a commit by any other connection), for caches that must never serve stale rows.
 * Undefined where the driver cannot tell; callers then do not cache.
 */
export function storeVersion(db: Kysely<any>): number | undefined {
  return versions.get(db)?.()
}

/**
 * Opens (and migrates) a store: medpanel's own schema by default, or another one (the reference
 * partner keeps its own tables in its own file).
 */
export async function openStore<DB = Database>(options: StoreOptions = {}, schema: Schema = SERVICE_SCHEMA): Promise<Store<DB>> {
  const {dialect, kind, version} = await createDialect(options)
  const db = new Kysely<DB>({dialect})
  if (version) versions.set(db, version)
  try {
    await migrateToLatest(db, schema)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return {db, kind, close: () => db.destroy()}
}

/**
 * Runs `fn` in a write transaction that takes the write lock up front (SQLite BEGIN IMMEDIATE),
 * so a read-check-write sequence can never interleave with another writer, in this process or
 * another one on the same file.
 */
export function writeTransaction<T, DB = Database>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return runTransaction(db, sql`begin immediate`, fn)
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
