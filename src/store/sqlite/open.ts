import {writeFileSync} from 'node:fs'
import {refuseSharedFiles} from '../private-file.js'
import {sqliteDriverName} from '../runtime.js'
import {keyFileOf} from '../secrets.js'
import {openBetterSqlite3} from './better-sqlite3.js'
import type {OpenOptions, SqliteHandle} from './handle.js'
import {openNodeSqlite} from './node-sqlite.js'

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

/** Opens a SQLite file on this runtime's driver, with the settings every connection runs with. */
export async function openSqlite(file: string, options: OpenOptions = {}): Promise<SqliteHandle> {
  const driver = sqliteDriverName()
  if (!options.readonly) createPrivately(file)
  // Before SQLite reads a page: a store or key file other users can read is refused, not used
  // (private-file.ts). Checked on every open, so `serve` refuses to start on one too. SQLite URI
  // names (file:…) are left to SQLite: only plain paths are checked.
  if (file !== '' && file !== ':memory:' && !file.startsWith('file:')) refuseSharedFiles([file, `${file}-wal`, `${file}-shm`, keyFileOf(file)])
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
