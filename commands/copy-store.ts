import {existsSync, renameSync, rmSync} from 'node:fs'
import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {type CopyResult, copyStore, TargetNotEmptyError} from '../src/store/copy.js'
import {tokenizeMissing} from '../src/interfaces/conversations/repository.js'
import {openStore} from '../src/schema.js'
import {isPostgresUrl, sqliteFileOf, type Store} from '../src/store/db.js'
import {createNewFile} from '../src/store/file-access.js'
import {keyFileOf} from '../src/store/secrets.js'
import {BaseCommand} from './base-command.js'
import {INTERRUPTED_EXIT} from './output/interrupt.js'

/** What a new SQLite store is made of: the file, its journals while open, and its key file. */
const STORE_FILES = ['', '-wal', '-shm', '-journal', '.key']

/** A copy into a new SQLite file: written under `partial`, renamed to `file` once it is whole. */
interface NewFile {
  file: string
  partial: string
}

export type CopyStoreResult = CopyResult & {file?: string; key_file?: string}

export default class CopyStore extends BaseCommand<typeof CopyStore> {
  static override readsOnly = true
  static override description =
    'Copy every table of a store into a store of the other kind, keeping ids and re-sealing secrets: a SQLite store into an empty PostgreSQL database (migrated first; secrets under MEDPANEL_SECRET_KEY), or a PostgreSQL database into a new SQLite file (secrets under a new key file beside it)'
  static override examples = [
    'MEDPANEL_SECRET_KEY="$(openssl rand -base64 32)" <%= config.bin %> copy-store --db ./medpanel.db --to postgres://medpanel@127.0.0.1:5432/medpanel',
    '<%= config.bin %> copy-store --database-url postgres://medpanel@127.0.0.1:5432/medpanel --to ./laptop.db   # with the MEDPANEL_SECRET_KEY that database is sealed under',
  ]
  static override flags = {
    to: Flags.string({
      description:
        'where to copy: from a SQLite store, the PostgreSQL database to fill (postgres://user@host:port/db), which must hold no data yet; from a PostgreSQL store, the new SQLite file (PATH or sqlite:PATH), which must not exist',
      required: true,
    }),
  }

  async run(): Promise<CopyStoreResult> {
    const to = this.flags.to
    if (!isPostgresUrl(this.flags['database-url'])) {
      if (!isPostgresUrl(to)) {
        throw new AppError('bad_request', `--to must be a postgres:// URL when the source is a SQLite store (got "${to}"); a SQLite store is copied to a file with backup`)
      }
      return this.intoPostgres(to)
    }
    if (isPostgresUrl(to))
      throw new AppError('bad_request', 'copy-store copies a PostgreSQL store into a new SQLite file (--to PATH); copy one PostgreSQL database to another with pg_dump')
    return this.intoNewFile(newFileOf(to))
  }

  private async intoPostgres(to: string): Promise<CopyStoreResult> {
    const source = await this.openStore()
    const target = await openStore({url: to})
    // Ctrl-C mid-copy: the copy is one transaction on the target, which PostgreSQL rolls back when
    // this process goes; say so, rather than leave the operator to guess what the target holds.
    const interrupted = () => interrupt('nothing was copied (the copy is one transaction, rolled back); the target keeps its empty tables. Run the same command again to copy.')
    process.once('SIGINT', interrupted)
    try {
      const result = await this.copy(source, target)
      this.say(`Copied ${result.rows} rows in ${result.tables.length} tables; ${result.resealed} secret(s) re-sealed under MEDPANEL_SECRET_KEY.`)
      return result
    } finally {
      process.off('SIGINT', interrupted)
      await target.close()
    }
  }

  /**
   * The copy is made under a temporary name beside the new file and renamed once it is whole and
   * closed, so the path the operator gave never holds half a store: stopped or failed, the files
   * made so far are removed.
   */
  private async intoNewFile(target: NewFile): Promise<CopyStoreResult> {
    const source = await this.openStore()
    createNewFile(target.partial, 'the copy')
    const interrupted = () => {
      removeStoreFiles(target.partial)
      interrupt(`nothing was kept (the partial copy was removed; ${target.file} was not made). Run the same command again to copy.`)
    }
    process.once('SIGINT', interrupted)
    let store: Store | undefined
    let finished = false
    try {
      store = await openStore({file: target.partial})
      const result = await this.copy(source, store)
      // Closing moves the write-ahead log into the file: the renamed file is the whole store.
      await store.close()
      store = undefined
      rename(target)
      finished = true
      this.say(
        `Copied ${result.rows} rows in ${result.tables.length} tables into ${target.file}; ${result.resealed} secret(s) re-sealed under its new key file ${keyFileOf(target.file)}.`,
      )
      return {...result, file: target.file, key_file: keyFileOf(target.file)}
    } finally {
      process.off('SIGINT', interrupted)
      await store?.close()
      if (!finished) removeStoreFiles(target.partial)
    }
  }

  private async copy(source: Store, target: Store): Promise<CopyResult> {
    try {
      const result = await copyStore(source, target, (table) => {
        if (!this.jsonEnabled()) process.stderr.write(`  ${table.table}: ${table.rows} row${table.rows === 1 ? '' : 's'}\n`)
      })
      // Rows move, indexes do not: interface E's search columns are built on a PostgreSQL target.
      const indexed = await tokenizeMissing(target.db)
      if (!this.jsonEnabled() && indexed > 0) process.stderr.write(`  search index: ${indexed} posts and comments tokenized\n`)
      return result
    } catch (error) {
      if (error instanceof TargetNotEmptyError) throw new AppError('conflict', error.message)
      throw error
    }
  }
}

function interrupt(what: string): never {
  process.stderr.write(`\nInterrupted: ${what}\n`)
  process.exit(INTERRUPTED_EXIT)
}

/**
 * The new SQLite file `--to` names (PATH or sqlite:PATH), refused when it or a file that would
 * belong to it (a key file, a journal) is there already: the copy never replaces or mixes with a
 * store.
 */
function newFileOf(to: string): NewFile {
  const file = /^(sqlite|file):/i.test(to) ? sqliteFileOf({url: to})! : to
  if (file.trim() === '' || file === ':memory:') throw new AppError('bad_request', `--to must name a new SQLite file (got "${to}")`)
  const there = STORE_FILES.map((suffix) => `${file}${suffix}`).find((path) => existsSync(path))
  if (there !== undefined) throw new AppError('conflict', `${there} already exists; copy-store makes a new SQLite store: give a path where there is none`)
  return {file, partial: `${file}.copying-${process.pid}`}
}

/** The copy and its key file under the names asked for, once nothing is left to write; the store file last, as it is what says a copy is there. */
function rename(target: NewFile): void {
  for (const suffix of ['.key', '-wal', '']) if (existsSync(`${target.partial}${suffix}`)) renameSync(`${target.partial}${suffix}`, `${target.file}${suffix}`)
  rmSync(`${target.partial}-shm`, {force: true})
}

function removeStoreFiles(file: string): void {
  for (const suffix of STORE_FILES) rmSync(`${file}${suffix}`, {force: true})
}
