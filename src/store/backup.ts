import {sql} from 'kysely'
import {chmodSync, constants, copyFileSync, existsSync, renameSync, rmSync, statSync} from 'node:fs'
import {AppError} from '../errors.js'
import {openSqlite} from './db.js'
import type {StoreParts} from './database.js'
import {createNewFile, fileAccessProblem} from './file-access.js'
import {keyFileOf, writeKeyFile} from './secrets.js'

export interface BackupResult {
  /** The copy of the store, consistent as of one moment. */
  file: string
  bytes: number
  /** The copy's key file (sealed secrets open only with it). */
  key_file: string
}

/**
 * A consistent copy of a live store: `VACUUM INTO` reads the whole database inside one read
 * transaction, so the copy is the store as of one moment while `serve` goes on writing (WAL lets
 * readers and a writer run together). It works the same on both SQLite drivers. The store's keys
 * are written beside the copy (0600): without them its sealed secrets cannot be opened.
 */
export async function backupStore({db, keys: keyring}: StoreParts, to: string): Promise<BackupResult> {
  if (existsSync(to)) throw new Error(`${to} already exists; back up to a new file`)
  // The copy holds what the store holds (members, withdrawal details): readable by its owner only,
  // like the store, from its first byte. VACUUM INTO fills an empty file made here 0600 ('wx':
  // never one that appeared meanwhile); the chmod covers a umask that took bits away.
  createNewFile(to, 'the backup')
  try {
    await sql`vacuum into ${to}`.execute(db)
  } catch (error) {
    rmSync(to, {force: true})
    throw error
  }
  chmodSync(to, 0o600)
  writeKeyFile(keyFileOf(to), [...keyring.keys.values()])
  return {file: to, bytes: statSync(to).size, key_file: keyFileOf(to)}
}

export interface RestoreResult {
  file: string
  from: string
  bytes: number
  /** Where the store that was replaced was saved first (null: there was none), with its key file beside it. */
  replaced_saved_as: string | null
}

/** Where restore saves the store it replaces: `NAME.before-restore-20261128T124500Z.db` beside it. */
export function beforeRestoreName(store: string, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  return store.endsWith('.db') ? `${store.slice(0, -3)}.before-restore-${stamp}.db` : `${store}.before-restore-${stamp}.db`
}

/**
 * Puts a backup in place of a store file. Refused while any process has the store open: leaving
 * WAL mode needs the only connection to the file, so a `serve` (or any command) still using it
 * makes the check fail with "busy" and nothing is touched. The backup is copied under a
 * temporary name and renamed over the store, with its key file beside it.
 */
export async function restoreStore(from: string, to: string, now: Date = new Date()): Promise<RestoreResult> {
  if (!existsSync(from)) throw new Error(`no backup at ${from}`)
  // Asked first, so that a backup this user cannot read, or a store it cannot replace, changes nothing.
  const denied = fileAccessProblem(from, 'read', 'the backup') ?? fileAccessProblem(to, 'write', 'the store')
  if (denied) throw new AppError('unavailable', denied)
  const backup = await openSqlite(from, {readonly: true})
  try {
    const ok = backup.value('pragma quick_check')
    if (ok !== 'ok') throw new Error(`${from} is not an intact SQLite store (quick_check: ${String(ok)})`)
  } finally {
    backup.close()
  }
  if (existsSync(to)) {
    const current = await openSqlite(to)
    try {
      current.exec('pragma busy_timeout = 0')
      current.exec('pragma journal_mode = delete')
      if (String(current.value('pragma journal_mode')).toLowerCase() !== 'delete') throw new Error('busy')
    } catch {
      throw new Error(`${to} is in use by another process (a running serve?); stop it before restoring`)
    } finally {
      current.close()
    }
  }
  // What is replaced is kept first, with its own key (its sealed secrets open with no other): a
  // restore of the wrong backup, or one older than a credit made since, loses nothing.
  let saved: string | null = null
  if (existsSync(to)) {
    saved = beforeRestoreName(to, now)
    copyFileSync(to, saved, constants.COPYFILE_EXCL)
    chmodSync(saved, 0o600)
    if (existsSync(keyFileOf(to))) {
      copyFileSync(keyFileOf(to), keyFileOf(saved), constants.COPYFILE_EXCL)
      chmodSync(keyFileOf(saved), 0o600)
    }
  }
  const partial = `${to}.restore-${process.pid}`
  copyFileSync(from, partial)
  // copyFile carries the backup's mode over: the store and its key are the owner's only (0600)
  // whatever it was, or the next open would refuse them (private-file.ts).
  chmodSync(partial, 0o600)
  for (const leftover of [`${to}-wal`, `${to}-shm`]) rmSync(leftover, {force: true})
  renameSync(partial, to)
  if (existsSync(keyFileOf(from))) {
    copyFileSync(keyFileOf(from), keyFileOf(to))
    chmodSync(keyFileOf(to), 0o600)
  }
  return {file: to, from, bytes: statSync(to).size, replaced_saved_as: saved}
}
