import {Kysely, SqliteDialect, sql, type Dialect} from 'kysely'
import {existsSync} from 'node:fs'
import {isAbsolute, resolve} from 'node:path'
import {environment} from '../config.js'
import {AppError} from '../errors.js'
import {checkSchema, migrateToLatest, type Schema, StoreVersionError} from './migrate.js'
import {withStatementCache, type StatementCacheStats} from './sqlite/handle.js'
import {openSqlite} from './sqlite/open.js'
import {contextOf, setContext, type DirectExecutor, type StoreContext} from './context.js'
import type {StoreKind} from './dialect.js'
import {openPostgres} from './postgres/open.js'
import {openReplica} from './postgres/replica.js'
import {CacheVersion, listenForChanges, PROBE_CHANNEL, trackCacheWrites} from './postgres/listen.js'
import {loadKeyring, type Keyring} from './secrets.js'
import {onStoreClose, recordHandle, takeClosers} from './handle.js'

export {openSqlite}
export {printableUrl} from './postgres/open.js'

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
   * Also open a read-only connection for plain reads (Store.reader): what `serve` does, so reads
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
  /**
   * Where plain reads go (one statement, or several that need no common snapshot): the store's
   * read-only connection when it was opened with one (StoreOptions.reader), else `db` itself. A
   * read inside a transaction reads through the transaction instead: it must see its own writes.
   */
  reader: Kysely<DB>
  /** The keys that seal this store's secrets (secrets.ts): loaded, or made for a new store, on first use. */
  readonly keys: Keyring
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
  epoch?: () => string | undefined
  cacheStats?: () => StatementCacheStats
  direct?: DirectExecutor
  pool?: StoreContext['pool']
  hosts?: StoreContext['hosts']
  cacheVersion?: CacheVersion
  serialize?: () => Uint8Array
}> {
  const url = options.url
  if (isPostgresUrl(url)) {
    if (options.readonly) throw new Error('--readonly applies to SQLite store files; give a PostgreSQL role read-only rights instead')
    const {dialect, where, pool, selector} = await openPostgres(url, {poolSize: options.poolSize})
    const hosts = selector ? {hosts: selector} : {}
    // Caches on PostgreSQL: see postgres/listen.ts. A store opened to look only caches nothing.
    if (options.inspect) return {dialect, kind: 'postgres', where, pool, ...hosts}
    const cacheVersion = new CacheVersion()
    return {dialect: trackCacheWrites(dialect, cacheVersion), kind: 'postgres', where, pool, cacheVersion, ...hosts}
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
    epoch: handle.epoch,
    cacheStats: handle.cacheStats,
    direct: handle.direct,
    ...(handle.serialize ? {serialize: handle.serialize} : {}),
  }
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

/**
 * Opens (and migrates) a store with the schema it is given: medpanel's own (composed above the
 * store, in src/schema.ts, whose openStore is what commands and tests call), or another one (the
 * reference partner keeps its own tables in its own file).
 */
export async function openStore<DB>(options: StoreOptions, schema: Schema): Promise<Store<DB>> {
  const {dialect, kind, where, version, epoch, file, cacheStats: stats, direct, pool, hosts, cacheVersion, serialize} = await createDialect(options)
  const db = new Kysely<DB>({dialect})
  recordHandle(db, {cacheStats: stats, image: serialize, file})
  let reader: Kysely<DB> | undefined
  // Loaded on first use: a store that never seals anything (the reference partner's) gets no key file.
  let keys: Keyring | undefined
  const keyring = () => (keys ??= kind === 'postgres' ? postgresKeyring() : loadKeyring(file))
  try {
    const writeLanes = kind === 'postgres' ? options.writeLanes : undefined
    setContext(db, definedOnly({kind, version, epoch, direct, pool, hosts, writeLanes}))
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
      setContext(reader, {kind, version: handle.version})
    }
    if (options.replicaUrl !== undefined) {
      if (kind !== 'postgres') throw new AppError('bad_request', 'a read replica applies to a PostgreSQL store only')
      const replica = await openReplica(db, options.replicaUrl, {poolSize: options.poolSize}, (handle) => setContext(handle, {kind}))
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
    reader: reader ?? db,
    get keys() {
      return keyring()
    },
    kind,
    close: async () => {
      const pending = takeClosers(db)
      await Promise.all(pending.map((fn) => fn().catch(() => undefined)))
      await reader?.destroy()
      await db.destroy()
    },
  }
}

/** The context of a handle with only the parts its driver has: an absent (or empty) part is left out, not set to undefined. */
function definedOnly(parts: {[K in keyof StoreContext]: StoreContext[K] | undefined}): StoreContext {
  return Object.fromEntries(Object.entries(parts).filter(([, value]) => Boolean(value))) as unknown as StoreContext
}
