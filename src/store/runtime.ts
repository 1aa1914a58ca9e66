import type {SqliteDriverName} from './sqlite/handle.js'

/** The JavaScript runtime medpanel is running on. Detected here and nowhere else. */
export type Runtime = 'node' | 'deno'

export function currentRuntime(): Runtime {
  return 'Deno' in globalThis ? 'deno' : 'node'
}

const DRIVERS: readonly SqliteDriverName[] = ['better-sqlite3', 'node:sqlite']

/**
 * The SQLite library for this process. Deno and Node 22.13+ (the single executable among them)
 * have node:sqlite built in and need no native addon; Node 20, what `npm ci` users run, uses
 * better-sqlite3. MEDPANEL_SQLITE_DRIVER picks one explicitly (tests run the suite on both).
 */
export function sqliteDriverName(env: NodeJS.ProcessEnv = process.env): SqliteDriverName {
  const forced = env.MEDPANEL_SQLITE_DRIVER
  if (forced !== undefined && forced !== '') {
    if (!(DRIVERS as readonly string[]).includes(forced)) {
      throw new Error(`MEDPANEL_SQLITE_DRIVER must be one of ${DRIVERS.join(', ')} (got "${forced}")`)
    }
    return forced as SqliteDriverName
  }
  if (currentRuntime() === 'deno') return 'node:sqlite'
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 13) ? 'node:sqlite' : 'better-sqlite3'
}
