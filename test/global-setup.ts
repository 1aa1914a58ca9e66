import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {chmodSync, existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative, resolve} from 'node:path'
import type {TestProject} from 'vitest/node'
import {STARTS_PROCESSES} from '../scripts/test-lists.mjs'
import {ensureFreshBuild} from './helpers/fresh-build.mjs'

/**
 * Before any test file runs:
 * - Every temporary directory of the run (stores, key files, clusters, the CLIs' working
 *   directories and caches) goes under one directory of its own: TMPDIR, which the test workers and every
 *   process they start inherit, points there, and it is removed when the run ends. Without it,
 *   each run left a few hundred directories in /tmp.
 * - The CLI tests run the built dist/, so every vitest run (plain `npx vitest run`, watch mode, or
 *   scripts/test.mjs) first rebuilds it when it is older than the sources; watch mode checks again
 *   before each rerun. scripts/test.mjs checks once for all its runtimes and sets
 *   MEDPANEL_TEST_BUILT=1, which skips the check here. A run of test files named one by one, none
 *   of which starts a process (none in STARTS_PROCESSES, scripts/test-lists.mjs), skips it too:
 *   the build took most of a small file's run after an edit.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const teardowns = [runDirectory(), runDatabases()]
  await runTemplate()
  if (process.env.MEDPANEL_TEST_BUILT !== '1') {
    if (needsDist(project)) ensureFreshBuild()
    project.onTestsRerun(() => {
      if (needsDist(project)) ensureFreshBuild()
    })
  }
  return () => {
    for (const teardown of teardowns) teardown()
  }
}

/**
 * Whether the tests about to run may start the built CLI: unless every filter on the command line
 * names one test file outside STARTS_PROCESSES, assume so. vitest keeps the filters in a field it
 * does not document (`filenamePattern`); without it, this answers yes, as before.
 */
function needsDist(project: TestProject): boolean {
  const filters = (project.vitest as unknown as {filenamePattern?: string[]}).filenamePattern ?? []
  if (filters.length === 0) return true
  const root = project.vitest.config.root
  return filters.some((filter) => {
    const file = relative(root, resolve(root, filter))
    if (!/\.test\.tsx?$/.test(file) || !existsSync(join(root, file))) return true
    return STARTS_PROCESSES.some((entry) => (entry.endsWith('/**') ? file.startsWith(entry.slice(0, -2)) : file === entry))
  })
}

/**
 * Points TMPDIR at a new directory for the run; what removes it again. The setup runs once per
 * project, and only the first makes the directory: nested ones would make paths too long for the
 * Unix sockets some programs keep there (Chromium's, at most 107 bytes).
 */
function runDirectory(): () => void {
  if (process.env.MEDPANEL_TEST_RUN_DIR) return () => undefined
  const root = mkdtempSync(join(tmpdir(), 'medpanel-run-'))
  // Others may pass through but not list it: a PostgreSQL cluster a test starts as root runs as
  // the postgres user, in a directory of its own inside (each made 0700 and handed over).
  chmodSync(root, 0o711)
  const outer = process.env.TMPDIR
  process.env.TMPDIR = root
  process.env.MEDPANEL_TEST_RUN_DIR = root
  // The caches the CLIs keep (V8's code cache, src/cli/code-cache.ts) go there too, not to ~/.cache.
  const outerCache = process.env.XDG_CACHE_HOME
  process.env.XDG_CACHE_HOME = join(root, 'cache')
  return () => {
    if (outerCache === undefined) delete process.env.XDG_CACHE_HOME
    else process.env.XDG_CACHE_HOME = outerCache
    if (outer === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = outer
    delete process.env.MEDPANEL_TEST_RUN_DIR
    // A CLI a test stopped may still be writing its code cache here as it exits: the removal then
    // meets a directory that filled again (ENOTEMPTY) and tries again, rather than failing the run.
    rmSync(root, {recursive: true, force: true, maxRetries: 10, retryDelay: 100})
  }
}

/**
 * On PostgreSQL, one migrated database for the whole run to copy (MEDPANEL_TEST_PG_TEMPLATE, with
 * MEDPANEL_TEST_PG_COPY the copy's strategy): every test store and every CLI test's database
 * starts as a copy of it (test/helpers/store.ts), where each worker migrated a template of its own
 * and each CLI test's database was migrated by its first command, a second or more of PostgreSQL's
 * time each. It carries the run's id, so the teardown below drops it with the rest.
 */
async function runTemplate(): Promise<void> {
  const url = process.env.MEDPANEL_TEST_DATABASE_URL
  const id = process.env.MEDPANEL_TEST_RUN_ID
  if (!url || !id || process.env.MEDPANEL_TEST_PG_TEMPLATE) return
  const {default: pg} = await import('pg')
  const {openStore} = await import('../src/schema.js')
  const name = `medpanel_template_${id}_run`
  const admin = new pg.Client({connectionString: url})
  await admin.connect()
  try {
    await admin.query(`create database ${name}`)
    const version = Number((await admin.query<{v: string}>('show server_version_num')).rows[0]!.v)
    const target = new URL(url)
    target.pathname = `/${name}`
    await (await openStore({url: target.toString()})).close()
    process.env.MEDPANEL_TEST_PG_TEMPLATE = name
    // PostgreSQL 15 and later copy a small database's files quicker than they log each page.
    process.env.MEDPANEL_TEST_PG_COPY = version >= 150000 ? ' strategy file_copy' : ''
  } finally {
    await admin.end()
  }
}

/**
 * On PostgreSQL, the run's id, which every database a test makes carries in its name
 * (test/helpers/store.ts); what drops those left when the run ends. A test worker cannot do it
 * at its own exit: vitest stops its workers without the process's exit event.
 */
function runDatabases(): () => void {
  const url = process.env.MEDPANEL_TEST_DATABASE_URL
  if (!url || process.env.MEDPANEL_TEST_RUN_ID) return () => undefined
  const id = randomBytes(4).toString('hex')
  process.env.MEDPANEL_TEST_RUN_ID = id
  return () => {
    delete process.env.MEDPANEL_TEST_RUN_ID
    const psql = (args: string[]) => spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qAt', ...args], {encoding: 'utf8'})
    const names = psql(['-c', `select datname from pg_database where datname like 'medpanel\\_%\\_${id}\\_%'`])
      .stdout.split('\n')
      .filter(Boolean)
    // One psql for them all; the cluster may already be gone, and then there is nothing to drop.
    if (names.length > 0) psql(names.flatMap((name) => ['-c', `drop database if exists ${name} with (force)`]))
  }
}
