import {statSync} from 'node:fs'
import {resolve} from 'node:path'
import {AppError} from '../errors.js'

/** Permission bits that give anyone but the file's owner some access to it (group and others). */
const SHARED_BITS = 0o077

/**
 * Refuses store files (the SQLite file, its -wal and -shm, its key file) that users other than
 * the owner can open, the way ssh refuses a private key: whoever can read the key file can forge
 * sign-in cookies and open every sealed partner password, and the store holds members' personal
 * data. medpanel creates all of them 0600; a file that is not was copied, restored or changed by
 * hand, and the operator fixes it with the chmod the message gives. Paths that do not exist are
 * skipped (a store being created). Windows has no such modes and is not checked.
 */
export function refuseSharedFiles(paths: string[]): void {
  if (process.platform === 'win32') return
  const shared: {path: string; mode: number}[] = []
  for (const path of paths) {
    let mode: number
    try {
      mode = statSync(path).mode
    } catch {
      // Missing (or not ours to stat): the open that follows reports it in its own words.
      continue
    }
    if ((mode & SHARED_BITS) !== 0) shared.push({path: resolve(path), mode})
  }
  if (shared.length === 0) return
  const bits = shared.reduce((all, file) => all | file.mode, 0)
  const access = bits & 0o044 ? 'readable' : bits & 0o022 ? 'writable' : 'accessible'
  const names = shared.map((file) => file.path)
  const subject = names.length === 1 ? `${names[0]} is` : `${names.slice(0, -1).join(', ')} and ${names.at(-1)} are`
  throw new AppError('unavailable', `${subject} ${access} by other users of this machine; run chmod 600 ${names.map(shellWord).join(' ')}`)
}

/** A path as one shell word, quoted only when it needs to be, so the chmod can be pasted as it is. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`
}
