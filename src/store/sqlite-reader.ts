/*
 * What a thread that reads a SQLite store on its own needs (interface E's search threads open
 * their own read-only connection). Kept apart from db.ts on purpose: a search thread's bundle
 * carries these modules alone, not the store's writers and PostgreSQL driver.
 */
export {betterSqlite3Location, loadBetterSqlite3From} from './sqlite/better-sqlite3.js'
export {withStatementCache} from './sqlite/handle.js'
export {openSqlite} from './sqlite/open.js'
