import {accessSync, constants, existsSync, writeFileSync} from 'node:fs'
import {dirname, resolve} from 'node:path'
import {AppError} from '../errors.js'

/**
 * Why this user cannot read (or read and write) a file medpanel keeps (`what`: "the store", "the
 * backup"), in one line from the file system's permissions, or undefined when they allow it.
 * SQLite's own words name neither the file nor the cause: a store whose file is writable in a
 * directory that is not fails with "attempt to write a readonly database", because SQLite creates
 * its -wal, -shm and -journal files beside the store; a file it may not read is "unable to open
 * database file"; Node's say EACCES. Asked after such a failure (or before a step that cannot be
 * undone halfway), so root, whom permissions do not stop, never sees one of these.
 */
export function fileAccessProblem(file: string, need: 'read' | 'write', what: string): string | undefined {
  const path = resolve(file)
  const dir = dirname(path)
  const cannot = `cannot ${need} ${what}`
  if (!existsSync(dir)) return `${cannot}: the directory ${dir} does not exist`
  // Without search (x) permission nothing in the directory can be reached, not even to see that it is there.
  if (!may(dir, constants.X_OK)) return `${cannot}: the directory ${dir} cannot be entered by this user`
  const exists = existsSync(path)
  if (exists && !may(path, constants.R_OK)) return `cannot read ${what}: the file ${path} is not readable by this user`
  if (need === 'read') return undefined
  if (exists && !writable(path)) return `${cannot}: the file ${path} is not writable by this user`
  if (!writable(dir)) {
    return `${cannot}: the directory ${dir} is not writable by this user${exists ? ' (SQLite makes its journal files there)' : ''}`
  }
  return undefined
}

/** Whether this process may write `path` (a file or a directory). */
export function writable(path: string): boolean {
  return may(path, constants.W_OK)
}

/** Whether this process's user may access `path` as `mode` asks. */
function may(path: string, mode: number): boolean {
  try {
    accessSync(path, mode)
    return true
  } catch {
    return false
  }
}

/**
 * Creates `file` empty, readable by its owner only; one that appeared meanwhile is not touched.
 * A directory this user may not write is said so, with the directory, rather than as EACCES.
 */
export function createNewFile(file: string, what: string): void {
  try {
    writeFileSync(file, '', {mode: 0o600, flag: 'wx'})
  } catch (error) {
    if (!isAccessDenied(error)) throw error
    throw new AppError('unavailable', fileAccessProblem(file, 'write', what) ?? `cannot write ${what} ${file}: ${(error as NodeJS.ErrnoException).code}`)
  }
}

/** Node's codes for a file the operating system would not let this user create, open or replace. */
function isAccessDenied(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOENT' || code === 'ENOTDIR'
}
