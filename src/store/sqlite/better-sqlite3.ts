import {createRequire} from 'node:module'
import type {OpenOptions, SqliteHandle} from './handle.js'

let location = 'better-sqlite3'

/**
 * Where better-sqlite3 is installed, as an absolute path. A worker thread started from source
 * text (interface E's search threads) resolves packages from the working directory, not from
 * medpanel's, so it is told where the addon is instead.
 */
export function betterSqlite3Location(): string {
  return createRequire(import.meta.url).resolve('better-sqlite3')
}

/** Loads better-sqlite3 from this path from now on (see betterSqlite3Location). */
export function loadBetterSqlite3From(path: string): void {
  location = path
}

/** better-sqlite3, the native addon `npm ci` builds: Node 20 and any Node it was compiled for. */
export async function openBetterSqlite3(file: string, options: OpenOptions = {}): Promise<SqliteHandle> {
  // SQLite URI names (file:…?immutable=1, readOnlyName in open.ts), as node:sqlite reads them:
  // better-sqlite3 enables them only when this variable is 1 as it loads. Plain paths read as before.
  process.env.SQLITE_USE_URI ??= '1'
  const {default: Database} = (await import(location)) as {default: typeof import('better-sqlite3')}
  const db = options.image
    ? new Database(Buffer.from(options.image.buffer, options.image.byteOffset, options.image.byteLength))
    : new Database(file, {readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false})
  return {
    driver: 'better-sqlite3',
    exec: (text) => void db.exec(text),
    value: (text) => db.prepare(text).pluck().get(),
    // better-sqlite3's statements already have Kysely's shape (reader, all/run/iterate on arrays).
    prepare: (text) => db.prepare(text),
    serialize: () => db.serialize(),
    close: () => void db.close(),
  }
}
