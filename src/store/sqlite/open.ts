import {existsSync, statSync, writeFileSync} from 'node:fs'
import {AppError} from '../../errors.js'
import {config} from '../../config.js'
import {dirname, resolve} from 'node:path'
import {fileAccessProblem, writable} from '../file-access.js'
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

/** A file's size in bytes; undefined when it does not exist (or cannot be seen). */
function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size
  } catch {
    return undefined
  }
}

/** Whether this process may write the store file `file` and create files beside it (its -wal). */
export function mayWriteStore(file: string): boolean {
  return writable(file) && writable(dirname(resolve(file)))
}

/**
 * The name a read-only connection opens `file` by. SQLite reads a WAL-mode store through its
 * -wal and -shm files and creates them when they are missing: in a directory this user may not
 * write that fails ("attempt to write a readonly database"), and beside a store file this user
 * may not write, the files it leaves take the store's read-only mode and would later stop a
 * writer. When they are missing (or the -wal is empty and alone) and this user may not write the
 * store or its directory, nothing is writing the store (a writer keeps both files while it has
 * it open, and this user's writers could not create them either) and no commit waits in a WAL,
 * so it is opened as SQLite's `immutable` URI: no locks, and no file created. Otherwise (a serve
 * has the store open, or a -wal holds commits) SQLite's own read-only access is used, which
 * shares the -shm with the writers and reads the WAL.
 */
export function readOnlyName(file: string): string {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return file
  const wal = sizeOf(`${file}-wal`)
  if (wal !== undefined && (wal > 0 || existsSync(`${file}-shm`))) return file
  if (mayWriteStore(file)) return file
  const path = resolve(file).replaceAll('\\', '/')
  return `file://${path.startsWith('/') ? '' : '/'}${path.split('/').map(encodeURIComponent).join('/')}?immutable=1`
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
    const name = options.readonly ? readOnlyName(file) : file
    handle = driver === 'node:sqlite' ? await openNodeSqlite(name, options) : await openBetterSqlite3(name, options)
  } catch (error) {
    throw openFailure(file, options, error)
  }
  try {
    handle.exec(`pragma busy_timeout = ${config.store.sqliteBusyTimeoutMs}`)
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
    throw openFailure(file, options, error)
  }
  return handle
}

/**
 * Why a store would not open: in the operator's terms when the file's or its directory's
 * permissions are the cause (file-access.ts), else SQLite's words with the path.
 */
function openFailure(file: string, options: OpenOptions, error: unknown): Error {
  const onDisk = file !== '' && file !== ':memory:' && !file.startsWith('file:')
  const problem = onDisk ? fileAccessProblem(file, options.readonly ? 'read' : 'write', 'the store') : undefined
  return problem ? new AppError('unavailable', problem) : new Error(`cannot open ${file}: ${(error as Error).message}`)
}
