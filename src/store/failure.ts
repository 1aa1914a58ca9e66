import {sqliteCodeOf} from './sqlite/handle.js'

/**
 * Whether an error is the store failing rather than the request being wrong: `busy` (another
 * writer holds the lock past the busy timeout; try again shortly), `unavailable` (the disk is
 * full, an I/O error, the file is read-only, gone or damaged; a database server that cannot be
 * reached) or `lost` (PostgreSQL: the connection broke while the request was using it, so a
 * commit it had sent may or may not have happened). All are 503s, never the caller's fault;
 * anything else is not a store failure. The one place that decides it, for every interface.
 */
export type StoreFailure = 'busy' | 'unavailable' | 'lost'

export function storeFailure(error: unknown): StoreFailure | undefined {
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
 * PostgreSQL's SQLSTATE classes in the same words: conflicts that outlasted the retries and lock
 * timeouts are `busy`; a server that is shutting down, starting up, out of disk or connections, or
 * cannot be reached or refuses a new connection, or a missing table, column or function (a damaged
 * or hand-edited schema) are `unavailable`. A connection that broke while in use is `lost`: the
 * server was stopped or crashed under it (57P01, 57P02), the socket was reset or closed (08xxx,
 * ECONNRESET, EPIPE, and pg's own errors without a code). Until it broke the request may have committed, so its caller is told so.
 */
function postgresFailure(error: unknown): StoreFailure | undefined {
  const code = (error as {code?: unknown} | null)?.code
  if (typeof code === 'string') {
    if (code === '40001' || code === '40P01' || code === '55P03') return 'busy'
    // A write on a server that is read-only: a primary demoted by a failover (or a standby).
    // Nothing it sent could have been written; the connection is dropped (postgres/hosts.ts).
    if (code === '25006') return 'unavailable'
    if (code === '57P01' || code === '57P02' || code === '08000' || code === '08003' || code === '08006' || code === '08007') return 'lost'
    if (code === 'ECONNRESET' || code === 'EPIPE') return 'lost'
    if (/^(08|53|57P|58)/.test(code) || code === '42P01' || code === '42703' || code === '42883') return 'unavailable'
    // A new connection refused: the database is gone, takes no connections for now, or no longer
    // accepts the store's credentials. Nothing was sent.
    if (code === '3D000' || code === '28000' || code === '28P01') return 'unavailable'
    if (code === '55000' && /not currently accepting connections/.test(error instanceof Error ? error.message : '')) return 'unavailable'
    if (['ECONNREFUSED', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'].includes(code)) return 'unavailable'
  }
  // Node reports a refused connection to a name with several addresses as an AggregateError of
  // one ECONNREFUSED each (its `code` is set on newer versions only).
  if (error instanceof AggregateError && error.errors.length > 0 && error.errors.every((inner) => postgresFailure(inner) === 'unavailable')) return 'unavailable'
  const message = error instanceof Error ? error.message : ''
  // pg's words, without a code: the pool gave up waiting for a new connection, or the server
  // closed one that was being opened. Nothing was sent on it.
  if (/^timeout exceeded when trying to connect$|^Connection terminated due to connection timeout$/.test(message)) return 'unavailable'
  // The socket closed under a connection in use, or a statement was sent on one that had broken.
  if (/^Connection terminated unexpectedly$|^Client has encountered a connection error and is not queryable$|^Client was closed and is not queryable$/.test(message)) return 'lost'
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
