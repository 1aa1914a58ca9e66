import {sqliteCodeOf} from './sqlite/handle.js'

/**
 * Whether an error is the store failing rather than the request being wrong: `busy` (another
 * writer holds the lock past the busy timeout; try again shortly) or `unavailable` (the disk is
 * full, an I/O error, the file is read-only, gone or damaged). Both are 503s, never the caller's
 * fault; anything else is not a store failure. The one place that decides it, for every interface.
 */
export function storeFailure(error: unknown): 'busy' | 'unavailable' | undefined {
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
