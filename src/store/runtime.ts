import {environment} from '../config.js'
import type {SqliteDriverName} from './sqlite/handle.js'

/** The JavaScript runtime medpanel is running on. Detected here and nowhere else. */
export type Runtime = 'node' | 'deno'

export function currentRuntime(): Runtime {
  return 'Deno' in globalThis ? 'deno' : 'node'
}

/**
 * The SQLite library for this process. Deno and Node 22.13+ (the single executable among them)
 * have node:sqlite built in and need no native addon; Node 20, what `npm ci` users run, uses
 * better-sqlite3. MEDPANEL_SQLITE_DRIVER picks one explicitly (tests run the suite on both).
 */
export function sqliteDriverName(forced: SqliteDriverName | undefined = environment().sqliteDriver): SqliteDriverName {
  if (forced !== undefined) return forced
  if (currentRuntime() === 'deno') return 'node:sqlite'
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 13) ? 'node:sqlite' : 'better-sqlite3'
}
