import type {OpenOptions, SqliteHandle} from './handle.js'

/** better-sqlite3, the native addon `npm ci` builds: Node 20 and any Node it was compiled for. */
export async function openBetterSqlite3(file: string, options: OpenOptions = {}): Promise<SqliteHandle> {
  const {default: Database} = await import('better-sqlite3')
  const db = new Database(file, {readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false})
  return {
    driver: 'better-sqlite3',
    exec: (text) => void db.exec(text),
    value: (text) => db.prepare(text).pluck().get(),
    // better-sqlite3's statements already have Kysely's shape (reader, all/run/iterate on arrays).
    prepare: (text) => db.prepare(text),
    close: () => void db.close(),
  }
}
