import type {SqliteDatabase, SqliteStatement} from 'kysely'
import type {DirectExecutor} from '../context.js'
import {config} from '../../config.js'

/** The SQLite libraries medpanel runs on: one per runtime, behind the same handle. */
export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite'

/**
 * What the store needs from a SQLite library: Kysely's own SqliteDatabase (prepare, close) plus
 * plain statement execution for pragmas and scripts. Both drivers are adapted to this, so
 * nothing above src/store/sqlite/ knows which one runs.
 */
export interface SqliteHandle extends SqliteDatabase {
  readonly driver: SqliteDriverName
  /** Runs one or more statements that return nothing (pragmas that set, DDL). */
  exec(text: string): void
  /** The first column of the first row a statement returns (pragmas that read). */
  value(text: string): unknown
  /** The whole database as bytes (SQLite's serialize), where the driver offers it: better-sqlite3. */
  serialize?(): Uint8Array
}

export interface OpenOptions {
  readonly?: boolean
  /**
   * Bytes from `serialize`: the database starts in memory as a copy of them, whatever the file
   * name. better-sqlite3 only; node:sqlite refuses it.
   */
  image?: Uint8Array
}

/**
 * SQLite's primary result codes by number, named as better-sqlite3 names them. node:sqlite
 * reports only the number (`errcode`, extended codes carry the primary one in the low byte), so
 * its errors are given the same `code` here and every caller (503 on a busy store, a full disk)
 * reads one name whatever the driver.
 */
const PRIMARY_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  23: 'SQLITE_AUTH',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
}

/** The driver-independent `SQLITE_*` name of a SQLite error's primary code, if it is one. */
export function sqliteCodeOf(error: unknown): string | undefined {
  const e = error as {code?: unknown; errcode?: unknown} | null
  if (typeof e?.errcode === 'number') return PRIMARY_CODES[e.errcode & 0xff] ?? 'SQLITE_ERROR'
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) {
    // better-sqlite3 names extended codes (SQLITE_CONSTRAINT_UNIQUE); callers compare primaries.
    const primary = Object.values(PRIMARY_CODES).find((name) => e.code === name || (e.code as string).startsWith(`${name}_`))
    return primary ?? e.code
  }
  return undefined
}

/** Gives a node:sqlite error the `code` better-sqlite3 would have given it. */
export function normalizeError(error: unknown): unknown {
  const e = error as {code?: unknown; errcode?: unknown} | null
  if (e && typeof e === 'object' && typeof e.errcode === 'number') {
    try {
      e.code = sqliteCodeOf(e)
    } catch {
      // a frozen error keeps its own code
    }
  }
  return error
}

/** How many prepared statements a connection keeps, and how much SQL text they may add up to. */
export interface StatementCacheLimits {
  /** Statements kept at most; the least recently used one goes first. */
  entries: number
  /**
   * Total length of the kept statements' SQL text. A prepared statement's memory grows with its
   * text (interface E's largest search, 134 KB of SQL, compiles to about half a megabyte), so
   * bounding the text bounds the memory.
   */
  textBytes: number
  /** A statement whose text alone is longer is never kept: it is a one-off search, not a hot path. */
  largest: number
}

export const STATEMENT_CACHE_LIMITS: StatementCacheLimits = config.store.statementCache

/** What a connection's statement cache holds now, and how many statements it has prepared. */
export interface StatementCacheStats {
  entries: number
  textBytes: number
  prepared: number
}

/**
 * Kysely prepares every query anew, and preparing costs more than running a point lookup.
 * Queries are built with parameters, so the SQL texts that repeat are few and their statements
 * are kept. Safe because Kysely's SQLite driver runs one query at a time on its one connection.
 * The cache is a least-recently-used list bounded by count and by SQL text (see
 * StatementCacheLimits): generated one-off SQL, such as interface E's searches with their many
 * possible shapes, passes through without piling up; a statement dropped from it is finalized
 * when the garbage collector reclaims it.
 *
 * It also keeps the store's version, a number that changes whenever the content may have: on
 * any statement through it that may write (anything but a plain SELECT), and when SQLite's
 * `PRAGMA data_version` shows another connection (another process) committed.
 */
export function withStatementCache(
  handle: SqliteHandle,
  limits: StatementCacheLimits = STATEMENT_CACHE_LIMITS,
): SqliteHandle & {version: () => number | undefined; epoch: () => string | undefined; cacheStats: () => StatementCacheStats; direct: DirectExecutor} {
  const cache = statementLru(limits)
  const versions = storeVersion(handle)
  let prepared = 0
  const prepare = (text: string): SqliteStatement => {
    const cached = cache.get(text)
    if (cached) return cached
    prepared++
    const fresh = handle.prepare(text)
    const statement = /^\s*select\b/i.test(text) ? fresh : countingWrites(fresh, CONTROL.test(text) ? versions.wrote : versions.changed)
    cache.keep(text, statement)
    return statement
  }
  return {
    driver: handle.driver,
    exec: (text) => {
      versions.changed()
      return handle.exec(text)
    },
    value: (text) => handle.value(text),
    ...(handle.serialize ? {serialize: () => handle.serialize!()} : {}),
    close: () => handle.close(),
    version: versions.current,
    epoch: versions.epoch,
    cacheStats: () => ({...cache.stats(), prepared}),
    // What Kysely's SQLite connection does with a query, minus its queue and promises.
    direct(text, parameters) {
      const statement = prepare(text)
      if (statement.reader) return statement.all(parameters) as unknown[]
      statement.run(parameters)
      return []
    },
    prepare,
  }
}

/** The kept statements by SQL text, least recently used first, within `limits`. */
function statementLru(limits: StatementCacheLimits) {
  const cache = new Map<string, SqliteStatement>()
  let textBytes = 0
  return {
    /** A kept statement, now the most recently used. */
    get(text: string): SqliteStatement | undefined {
      const cached = cache.get(text)
      if (cached) {
        cache.delete(text)
        cache.set(text, cached)
      }
      return cached
    },
    keep(text: string, statement: SqliteStatement): void {
      if (text.length > limits.largest) return
      cache.set(text, statement)
      textBytes += text.length
      // Map iteration is insertion order, and a hit re-inserts: the first key is the least recently used.
      for (const oldest of cache.keys()) {
        if (cache.size <= limits.entries && textBytes <= limits.textBytes) break
        cache.delete(oldest)
        textBytes -= oldest.length
      }
    },
    stats: () => ({entries: cache.size, textBytes}),
  }
}

/**
 * Statements that end, open or mark a transaction, or set how it syncs: they change nothing a
 * statement on this connection reads (a rollback does, so it is not one of them).
 */
const CONTROL = /^\s*(begin|commit|end|savepoint|release|pragma\s+synchronous)\b/i

/**
 * The store's version as this handle sees it. It moves on every statement that may write through
 * this handle (`wrote`), and whenever another connection's commit moved SQLite's data_version.
 * That is looked up once per event-loop turn: a request in this turn sees the store as of the
 * turn's start, as if it had been served a few microseconds earlier.
 *
 * `epoch` is a narrower mark for a writer that keeps rows in memory (the ledger's, see
 * interfaces/balance/ledger.ts): SQLite's data_version read now, and how many statements through
 * this handle may have changed the content (`changed`: not the transaction's own begin, commit,
 * savepoints and sync pragma, which every batch runs). Read inside a write transaction, where no
 * other connection can commit, and again after the writer's own statements, it tells that
 * writer whether anything but itself has written since.
 */
function storeVersion(handle: SqliteHandle): {wrote: () => void; changed: () => void; current: () => number | undefined; epoch: () => string | undefined} {
  const dataVersion = handle.prepare('pragma data_version')
  const readDataVersion = () => Number((dataVersion.all([])[0] as {data_version: number | bigint}).data_version)
  let version = 0
  let changes = 0
  let external = readDataVersion()
  let checked = false
  const recheck = () => (checked = false)
  return {
    wrote: () => {
      version++
    },
    changed: () => {
      version++
      changes++
    },
    epoch: () => {
      try {
        return `${readDataVersion()}:${changes}`
      } catch {
        return undefined
      }
    },
    // Undefined when SQLite cannot say (the handle was closed under a request): callers then read
    // the store, which fails the way a closed store does everywhere else.
    current: () => {
      if (!checked) {
        let now: number
        try {
          now = readDataVersion()
        } catch {
          return undefined
        }
        checked = true
        setImmediate(recheck)
        if (now !== external) {
          external = now
          version++
        }
      }
      return version
    },
  }
}

/** A statement that may write: each run moves the store's version first. */
function countingWrites(fresh: SqliteStatement, wrote: () => void): SqliteStatement {
  return {
    reader: fresh.reader,
    all: (parameters) => {
      wrote()
      return fresh.all(parameters)
    },
    run: (parameters) => {
      wrote()
      return fresh.run(parameters)
    },
    iterate: (parameters) => {
      wrote()
      return fresh.iterate(parameters)
    },
  }
}
