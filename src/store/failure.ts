import {sqliteCodeOf} from './sqlite/handle.js'

/**
 * Whether an error is the store failing rather than the request being wrong: `busy` (another
 * writer holds the lock past the busy timeout; try again shortly) or `unavailable` (the disk is
 * full, an I/O error, the file is read-only, gone or damaged). Both are 503s, never the caller's
 * fault; anything else is not a store failure. The one place that decides it, for every interface.
 */
export function storeFailure(error: unknown): 'busy' | 'unavailable' | undefined {
  const postgres = postgresFailure(error)
  if (postgres) return postgres
  const code = sqliteCodeOf(error)
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'busy'
  if (code !== undefined && UNAVAILABLE.has(code)) return 'unavailable'
  const message = error instanceof Error ? error.message : ''
  // A table or column this release's queries rely on is missing: the store is damaged or was
  // changed by hand, which no request can fix.
  if (code === 'SQLITE_ERROR' && /no such (table|column)/i.test(message)) return 'unavailable'
  // Kysely's and the drivers' words for a store that was closed under a request (shutdown).
  if (/database connection is not open|driver has already been destroyed|database is not open/i.test(message)) return 'unavailable'
  return undefined
}

const UNAVAILABLE = new Set(['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN', 'SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_NOMEM', 'SQLITE_PROTOCOL'])

/**
 * PostgreSQL's SQLSTATE classes in the same two words: conflicts that outlasted the retries and
 * lock timeouts are `busy`; a server that is gone, shutting down, out of disk or connections,
 * or a missing table, column or function (a damaged or hand-edited schema) are `unavailable`. Connection errors from the driver (no SQLSTATE) count as
 * unavailable too.
 */
function postgresFailure(error: unknown): 'busy' | 'unavailable' | undefined {
  const code = (error as {code?: unknown} | null)?.code
  if (typeof code !== 'string') return undefined
  if (code === '40001' || code === '40P01' || code === '55P03') return 'busy'
  if (/^(08|53|57P|58)/.test(code) || code === '42P01' || code === '42703' || code === '42883') return 'unavailable'
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code)) return 'unavailable'
  return undefined
}

/**
 * Input PostgreSQL refuses to store although it is well-formed JSON or UTF-8: text holding the NUL
 * character (U+0000), which a PostgreSQL `text` value cannot contain. It is the caller's to fix,
 * so it is a 400 naming the problem, never a 500. (SQLite stores such text.)
 */
export function storeRefusal(error: unknown): string | undefined {
  const code = (error as {code?: unknown} | null)?.code
  if (code === '22021' || code === '22P05') return 'text containing the NUL character (U+0000) cannot be stored; remove it and send again'
  return undefined
}
