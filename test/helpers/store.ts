import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import pg from 'pg'
import {openStore} from '../../src/schema.js'
import type {Store, StoreOptions} from '../../src/store/db.js'
import {storeImage} from '../../src/store/handle.js'
import {borrowDatabase, returnDatabase} from './recycled-databases.js'

/*
 * Which store the suites run on. Unset: SQLite (a private in-memory store per test, store files
 * for CLI tests). MEDPANEL_TEST_DATABASE_URL=postgres://…: PostgreSQL, a database per store a
 * test asks for, made from a migrated template, and reset for the next test when the store
 * closes (test/helpers/recycled-databases.ts). `npm test`
 * sets it for its PostgreSQL run (scripts/test.mjs); .ci/run starts the cluster.
 */
export const TEST_DATABASE_URL = process.env.MEDPANEL_TEST_DATABASE_URL || undefined
export const onPostgres = TEST_DATABASE_URL !== undefined

function urlOf(database: string): string {
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${database}`
  return url.toString()
}

/** One statement on the cluster's maintenance database, synchronously (CLI tests are synchronous). */
function admin(statement: string): void {
  const run = spawnSync('psql', [TEST_DATABASE_URL!, '-v', 'ON_ERROR_STOP=1', '-q', '-c', statement], {encoding: 'utf8'})
  if (run.status !== 0) throw new Error(`psql ${statement}: ${run.stderr}`)
}

/**
 * A name for a database this test run makes: `medpanel_<kind>_<run>_<random>`, where <run> is
 * the run's id (test/global-setup.ts), which drops every database of its run when the run ends.
 * Tests drop their own stores' databases as they close them; what a test keeps to the end (a CLI
 * test's store, each worker's template) or leaves behind when it fails goes then.
 */
function databaseName(kind: string): string {
  return `medpanel_${kind}_${process.env.MEDPANEL_TEST_RUN_ID ?? 'norun'}_${randomBytes(6).toString('hex')}`
}

function dropStatement(name: string): string {
  return `drop database if exists ${name} with (force)`
}

let adminPool: pg.Pool | undefined

/**
 * The same, where a test can wait: on one connection this test process keeps, not a psql process
 * per statement. Making and dropping a database for each in-process test is the PostgreSQL run's
 * most repeated step; a psql process cost more CPU than the statement. The idle connection does
 * not keep the process alive.
 */
async function adminAsync(statement: string): Promise<void> {
  adminPool ??= new pg.Pool({connectionString: TEST_DATABASE_URL, max: 1, allowExitOnIdle: true})
  await adminPool.query(statement)
}

/**
 * The migrated database to copy: the run's (test/global-setup.ts), or, where a test process runs
 * outside such a run, one it migrates itself.
 */
let template: Promise<string> | undefined
function templateDatabase(): Promise<string> {
  const shared = process.env.MEDPANEL_TEST_PG_TEMPLATE
  if (shared) return Promise.resolve(shared)
  template ??= (async () => {
    const name = databaseName('template')
    await adminAsync(`create database ${name}`)
    await (await openStore({url: urlOf(name)})).close()
    return name
  })()
  return template
}

let copyStrategy: Promise<string> | undefined

/**
 * How the cluster copies the template. PostgreSQL 15 and later default to writing every page of
 * it through the write-ahead log (WAL_LOG), which suits copying a large database; a test's
 * template is a few megabytes, mostly the catalog, and copying its files is quicker: 33 ms
 * against 55 ms a database on a quiet cluster, 106-190 ms against 190-318 ms on a busy one.
 */
function strategy(): Promise<string> {
  const shared = process.env.MEDPANEL_TEST_PG_COPY
  if (shared !== undefined) return Promise.resolve(shared)
  copyStrategy ??= (async () => {
    adminPool ??= new pg.Pool({connectionString: TEST_DATABASE_URL, max: 1, allowExitOnIdle: true})
    const {rows} = await adminPool.query<{server_version_num: string}>('show server_version_num')
    return Number(rows[0]!.server_version_num) >= 150000 ? ' strategy file_copy' : ''
  })()
  return copyStrategy
}

/** A new, empty, migrated PostgreSQL database; its URL. */
export async function freshDatabaseUrl(): Promise<string> {
  const name = databaseName('test')
  await adminAsync(`create database ${name} template ${await templateDatabase()}${await strategy()}`)
  return urlOf(name)
}

/** Drops the database of a test store's URL, whoever is still connected to it. */
function dropDatabaseOf(url: string): void {
  admin(dropStatement(databaseOf(url)))
}

function databaseOf(url: string): string {
  return new URL(url).pathname.slice(1)
}

let migrated: Promise<Uint8Array | undefined> | undefined

/**
 * A migrated in-memory store's bytes, made once per test process, where the SQLite driver can
 * serialize (better-sqlite3): a copy of them opens in well under a millisecond, where migrating
 * anew took 20-30 ms of SQLite's schema work, once for each of hundreds of tests. Undefined on
 * node:sqlite, whose stores are then migrated each time.
 */
function migratedImage(): Promise<Uint8Array | undefined> {
  migrated ??= openStore({file: ':memory:'}).then(async (store) => {
    const image = storeImage(store.db)
    await store.close()
    return image
  })
  return migrated
}

/**
 * A fresh migrated in-memory SQLite store, whichever store the run is on (see migratedImage), with
 * any other options given.
 */
export async function openMemoryStore(options: Omit<StoreOptions, 'file' | 'url' | 'image'> = {}): Promise<Store> {
  const image = await migratedImage()
  return openStore({...options, file: ':memory:', ...(image ? {image} : {})})
}

/**
 * A fresh migrated store for one test: in-memory SQLite (a copy of one migrated store, see
 * migratedImage), or a database of its own on PostgreSQL. Extra options (a SQLite file, say) are
 * honoured on SQLite only.
 */
export async function openTestStore(options: StoreOptions = {}): Promise<Store> {
  if (!onPostgres) {
    const {file, ...rest} = options
    const inMemory = (file === undefined || file === ':memory:') && rest.url === undefined && rest.image === undefined
    return inMemory ? openMemoryStore(rest) : openStore({file: ':memory:', ...options})
  }
  const url = await borrowDatabase(freshDatabaseUrl)
  const store = await openStore({url})
  // The same Store with a close that also gives its database back, reset for the next test or
  // dropped (test/helpers/recycled-databases.ts); a spread would read its keys now.
  const closeStore = store.close
  let closed: Promise<void> | undefined
  store.close = () => {
    closed ??= closeStore().then(() => returnDatabase(url, () => adminAsync(dropStatement(databaseOf(url)))))
    return closed
  }
  return store
}

/**
 * A store a test opens several times, each open standing for another process (its own connection
 * and keyring): a SQLite file in a new temporary directory, or a PostgreSQL database of its own.
 * `options` go to openStore; `drop` removes the database once every handle is closed.
 */
export async function reopenableStore(): Promise<{options: StoreOptions; drop: () => void}> {
  if (!onPostgres) return storeFile()
  const url = await freshDatabaseUrl()
  return {options: {url}, drop: () => dropDatabaseOf(url)}
}

/**
 * Where a test may open a store that nothing has migrated yet (to migrate it with an older
 * release's schema first): a file in a new temporary directory, or a new, empty PostgreSQL
 * database. `drop` removes the database once every handle is closed.
 */
export function emptyStore(): {options: StoreOptions; drop: () => void} {
  if (!onPostgres) return storeFile()
  const name = databaseName('empty')
  admin(`create database ${name}`)
  const url = urlOf(name)
  return {options: {url}, drop: () => dropDatabaseOf(url)}
}

/** A store file, not yet made, in a new temporary directory (nothing to drop). */
function storeFile(): {options: StoreOptions; drop: () => void} {
  return {options: {file: join(mkdtempSync(join(tmpdir(), 'medpanel-test-')), 'store.db')}, drop: () => undefined}
}

const databaseForFile = new Map<string, string>()

/**
 * The store flags for a CLI run on `file`: `--db file` on SQLite; on PostgreSQL, `--database-url`
 * of a database made for that file on first use, so each test's "store file" stays its own.
 */
export function storeFlags(file: string): string[] {
  if (!onPostgres) return ['--db', file]
  let url = databaseForFile.get(file)
  if (!url) {
    const name = databaseName('cli')
    // A copy of the run's migrated template where there is one: the first command then has no
    // migrations to run, which cost each CLI test a second or more of PostgreSQL's time.
    const template = process.env.MEDPANEL_TEST_PG_TEMPLATE
    admin(template ? `create database ${name} template ${template}${process.env.MEDPANEL_TEST_PG_COPY ?? ''}` : `create database ${name}`)
    url = urlOf(name)
    databaseForFile.set(file, url)
  }
  return ['--database-url', url]
}

/**
 * The store a CLI run used for `file` (see storeFlags), opened in the test: the file itself on
 * SQLite, its database on PostgreSQL. Closing it leaves the database for the next CLI run.
 */
export function openCliStore(file: string): Promise<Store> {
  if (!onPostgres) return openStore({file})
  const [, url] = storeFlags(file)
  return openStore({url: url!})
}

/**
 * Makes the empty, migrated store a CLI run on `file` uses (see storeFlags), as a command that
 * writes would: CLI tests that start from an empty store make it first, since a command that only
 * reads refuses a missing one.
 */
export async function makeStoreFile(file: string): Promise<void> {
  await (await openCliStore(file)).close()
}
