import {existsSync, rmSync} from 'node:fs'
import * as Flags from '@oclif/core/flags'
import {config} from '../../src/config.js'
import {AppError} from '../../src/errors.js'
import {jsonLogLine, type LogFormat} from '../../src/lib/log.js'
import {openStore} from '../../src/schema.js'
import {isPostgresUrl, sqliteFileOf, type Store} from '../../src/store/db.js'
import {fileAccessProblem} from '../../src/store/file-access.js'
import {storeFailure} from '../../src/store/failure.js'
import {printableUrl} from '../../src/store/postgres/open.js'
import {sqliteCodeOf} from '../../src/store/sqlite/handle.js'
import {mayWriteStore} from '../../src/store/sqlite/open.js'
import {oneLine} from './messages.js'

/*
 * The store a command runs on: which one the flags and environment name, the checks made before
 * it is opened (so a refusal leaves nothing behind), a new SQLite file removed again when the run
 * failed, and store failures in an operator's words.
 */

/** Where commands keep the store unless told otherwise. */
export const DEFAULT_STORE = './medpanel.db'
/** Where the demo keeps its own store (serve --demo, demo). */
export const DEMO_STORE = './medpanel-demo.db'

/** The flags every command takes to name its store (BaseCommand's baseFlags). */
export const storeFlags = {
  db: Flags.string({
    description: 'SQLite store file [default: ./medpanel.db; the demo: ./medpanel-demo.db]',
    env: 'MEDPANEL_DB',
    helpGroup: 'STORE',
  }),
  'database-url': Flags.string({
    description: 'database URL instead of --db: postgres://user@host:port/db for PostgreSQL, or sqlite:PATH',
    env: 'MEDPANEL_DATABASE_URL',
    helpGroup: 'STORE',
  }),
  'pool-size': Flags.integer({
    description: 'PostgreSQL connections this process keeps open [default: 10]',
    env: 'MEDPANEL_POOL_SIZE',
    min: 1,
    max: 1000,
    helpGroup: 'STORE',
  }),
  'write-lanes': Flags.integer({
    description: `PostgreSQL withdrawal batches that run at once across every process on the database; give every process the same [default: ${config.store.postgresWriteLanes}]`,
    env: 'MEDPANEL_WRITE_LANES',
    min: 1,
    max: config.store.postgresWriteLanesMax,
    helpGroup: 'STORE',
  }),
}

/** The store flags as parsed (partner-serve's --db alone among them). */
export interface StoreFlags {
  db?: string
  'database-url'?: string
  'pool-size'?: number
  'write-lanes'?: number
}

/** How a run opens its store: the command's own rules beside the flags. */
export interface OpenOptions {
  /** Also open the read-only connection plain reads use (serve). */
  reader?: boolean
  /** Only look (status): never migrate, never make a store. */
  inspect?: boolean
  listenUrl?: string
  replicaUrl?: string
}

/** What a run tells the store beside its flags: the command line, and which rules its command follows. */
export interface RunFacts {
  argv: readonly string[]
  /** The command only reads (BaseCommand.readsOnly). */
  readsOnly: boolean
  /** The run keeps to the demo's own store when no --db is given. */
  demo: boolean
}

/** What SQLite and medpanel may create beside a store file: its journals and its key file. */
const STORE_FILE_SUFFIXES = ['', '-wal', '-shm', '-journal', '.key']

/** The store of one command run: opened on first use, closed (and, if new and the run failed, removed) at its end. */
export class CommandStore {
  private store: Store | undefined
  /** The SQLite file this run opens as its store, kept for messages about it when opening it failed too. */
  private sqliteFile: string | undefined
  /**
   * The SQLite store this run is making (its file did not exist when the command opened it), with
   * the files it may add beside it that were not there either.
   */
  private newStore: {file: string; files: string[]; announced?: boolean} | undefined

  /** The store, opened and migrated on first use. */
  async open(flags: StoreFlags, run: RunFacts, options: OpenOptions = {}): Promise<Store> {
    if (this.store) return this.store
    const dbGiven = run.argv.some((arg) => arg === '--db' || arg.startsWith('--db='))
    const file = storeFileOf(flags, dbGiven, run.demo)
    const where = flags['database-url'] ? {url: flags['database-url'], poolSize: flags['pool-size'], writeLanes: flags['write-lanes']} : {file}
    const sqliteFile = sqliteFileOf(where)
    this.sqliteFile = sqliteFile !== undefined && isStoreFile(sqliteFile) ? sqliteFile : undefined
    const readsOnly = run.readsOnly || options.inspect === true
    if (this.sqliteFile !== undefined && !existsSync(this.sqliteFile)) {
      const from = dbGiven ? 'given with --db' : flags.db !== undefined ? 'from MEDPANEL_DB' : 'the default; name one with --db or MEDPANEL_DB'
      // A store is never made by a command that only reads: a typo in --db, or a MEDPANEL_DB
      // left exported from elsewhere, must not answer "nothing here" from a store made just now.
      if (readsOnly) throw new AppError('not_found', `there is no store at ${this.sqliteFile} (${from}); nothing was created`)
      const made = this.sqliteFile
      this.newStore = {file: made, files: STORE_FILE_SUFFIXES.map((suffix) => `${made}${suffix}`).filter((f) => !existsSync(f))}
    }
    const readonly = readsOnly && !options.inspect && sqliteFile !== undefined && readOnlyStore(sqliteFile)
    if (!readsOnly && this.sqliteFile !== undefined && existsSync(this.sqliteFile)) {
      // Asked before SQLite opens it: SQLite would open a store it may not write read-only, and
      // leave -wal and -shm files beside it before the first write failed.
      const denied = fileAccessProblem(this.sqliteFile, 'write', 'the store')
      if (denied) throw new AppError('unavailable', denied)
    }
    this.store = await openStore({...where, ...options, ...(readonly ? {readonly} : {})})
    return this.store
  }

  /**
   * Says on stderr, once, that this run made a new store. Commands say it when they succeed
   * (close); serve says it once it is up, since it runs until it is stopped.
   */
  announce(format: LogFormat): void {
    if (!this.newStore || this.newStore.announced) return
    this.newStore.announced = true
    const file = this.newStore.file
    process.stderr.write(format === 'json' ? `${jsonLogLine('info', 'created a new store', {store: file})}\n` : `created a new store at ${file}\n`)
  }

  /**
   * Closes the store. A store this run made is kept only when the run succeeded: one that failed
   * (bad input, a refusal, Ctrl-C) leaves the directory as it found it, so the next run starts clean.
   */
  async close(failed: boolean, format: LogFormat): Promise<void> {
    await this.store?.close()
    this.store = undefined
    if (!this.newStore || this.newStore.announced) return
    if (failed) for (const file of this.newStore.files) rmSync(file, {force: true})
    else this.announce(format)
  }

  /** A store failure in an operator's words, naming the store (`name`, asked only then); undefined for any other error. */
  problem(error: unknown, name: () => string): string | undefined {
    return storeFailure(error) === undefined ? undefined : storeProblem(error, name(), this.sqliteFile)
  }
}

/**
 * The SQLite file the flags name (or the default), after refusing what would open a store nobody
 * meant: an empty value (a script whose variable was unset), both --db and --database-url, and
 * PostgreSQL's settings given for a SQLite store.
 */
function storeFileOf(flags: StoreFlags, dbGiven: boolean, demo: boolean): string {
  if (flags['database-url'] === '') throw new AppError('bad_request', '--database-url (or MEDPANEL_DATABASE_URL) is empty; give a database URL')
  if (flags['database-url'] !== undefined && flags.db !== undefined) {
    throw new AppError('bad_request', 'give the store once: --db (or MEDPANEL_DB) or --database-url (or MEDPANEL_DATABASE_URL), not both')
  }
  if (flags['database-url'] === undefined && !dbGiven && process.env.MEDPANEL_DB === '') {
    throw new AppError('bad_request', 'MEDPANEL_DB is set but empty; give the store file, e.g. --db ./medpanel.db')
  }
  // The demo keeps to a file of its own, so its published credentials never land in a real store.
  const file = flags.db ?? (demo ? DEMO_STORE : DEFAULT_STORE)
  if (flags['database-url'] === undefined && file.trim() === '') throw new AppError('bad_request', '--db (or MEDPANEL_DB) is empty; give the store file, e.g. --db ./medpanel.db')
  // Settings of a PostgreSQL store given for a SQLite one would be ignored without a word:
  // refused instead, as serve's --listen-url and --replica-url are.
  const onPostgres = isPostgresUrl(flags['database-url'])
  for (const [flag, variable] of [
    ['pool-size', 'MEDPANEL_POOL_SIZE'],
    ['write-lanes', 'MEDPANEL_WRITE_LANES'],
  ] as const) {
    if (flags[flag] !== undefined && !onPostgres) {
      throw new AppError('bad_request', `--${flag} (or ${variable}) applies to a PostgreSQL store: give --database-url postgres://… too, or leave it out`)
    }
  }
  return file
}

/** The store as the operator named it, for messages about the store itself (a URL without its password). */
export function storeName(flags: StoreFlags | undefined, demo: boolean): string {
  const url = flags?.['database-url']
  if (url !== undefined) return isPostgresUrl(url) ? printableUrl(url) : url
  return flags?.db ?? (flags ? (demo ? DEMO_STORE : DEFAULT_STORE) : 'the store')
}

/** A store on disk, as opposed to an in-memory one or a `file:` URI SQLite resolves itself. */
function isStoreFile(file: string): boolean {
  return file !== '' && file !== ':memory:' && !file.startsWith('file:')
}

/** A SQLite store file that exists and that this user may not write (or not create files beside). */
function readOnlyStore(file: string): boolean {
  if (!isStoreFile(file) || !existsSync(file)) return false
  return !mayWriteStore(file)
}

/**
 * A store failure in an operator's words, naming the store; undefined for any other error. `file`
 * (a SQLite store's) is looked at when SQLite could not write or open a file: its permissions, or
 * its directory's, name the cause SQLite's words leave out.
 */
function storeProblem(error: unknown, store: string, file?: string): string | undefined {
  const failure = storeFailure(error)
  if (failure === undefined) return undefined
  const code = sqliteCodeOf(error)
  const denied =
    file !== undefined && (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR') ? fileAccessProblem(file, 'write', 'the store') : undefined
  if (denied) return denied
  if (code === 'SQLITE_FULL') return `the store ${store} is full (no space left on its disk, or at its size limit); the write that failed was not saved`
  if (code === 'SQLITE_READONLY') return `the store ${store} is read-only for this user; this command needs to write to it (read commands such as list-* and show-* work)`
  if (code === 'SQLITE_NOTADB') return `cannot open ${store}: file is not a database`
  if (failure === 'busy') return `the store ${store} is busy (another process holds its write lock); try again`
  if (failure === 'lost')
    return `the connection to the store ${store} broke (${oneLine((error as Error).message)}); what this command was writing may or may not have been saved: look before running it again`
  return `the store ${store} cannot be used: ${oneLine((error as Error).message)}`
}
