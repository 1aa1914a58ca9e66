// Keeps dist/ (what the CLI tests run: bin/run.js loads dist/cli.js) as new as the sources. Used by
// vitest's globalSetup (test/global-setup.ts), so a plain `npx vitest run` or watch mode after an
// edit tests the edited code, and by scripts/test.mjs, which checks once before its runs and tells
// them (MEDPANEL_TEST_BUILT=1) not to check again. Plain JavaScript: scripts/test.mjs runs it on
// Node without a TypeScript loader, and the globalSetup may run on Deno.
import {spawnSync} from 'node:child_process'
import {readdirSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '../..')

/** What scripts/build.mjs reads: the sources, the build scripts, and the settings esbuild and oclif take. */
const INPUTS = ['src', 'commands', 'data', 'scripts/build.mjs', 'scripts/oclif-trim.mjs', 'scripts/search-worker-bundle.mjs', 'package.json', 'tsconfig.json']
/** What it writes last: dist/cli.js, its CommonJS copy, then the manifest. A missing one means no (whole) build. */
const OUTPUTS = ['dist/cli.js', 'dist/cjs/cli.js', 'oclif.manifest.json']

function newest(path) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    return 0
  }
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = stat.mtimeMs // a deleted or renamed file shows only in its directory's time
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)))
  return latest
}

function builtAt() {
  let oldest = Infinity
  for (const file of OUTPUTS) {
    try {
      oldest = Math.min(oldest, statSync(join(root, file)).mtimeMs)
    } catch {
      return 0
    }
  }
  return oldest
}

/**
 * The first of the build's inputs (and `extra`, paths in the checkout) that changed after `time`
 * (ms since 1970), or undefined when none did.
 */
export function changedSince(time, extra = []) {
  return [...INPUTS, ...extra].find((input) => newest(join(root, input)) > time)
}

/** Why dist/ needs building, or undefined when it is newer than everything it is built from. */
export function staleReason() {
  const built = builtAt()
  if (built === 0) return 'dist/ has not been built'
  const changed = changedSince(built)
  return changed === undefined ? undefined : `${changed} changed since dist/ was built`
}

/**
 * Builds dist/ when it is older than its sources (or `force`). Runs scripts/build.mjs on the
 * runtime running this (Deno included). Returns what it did; throws if the build fails.
 */
export function ensureFreshBuild({force = false, log = (line) => process.stderr.write(`${line}\n`)} = {}) {
  const reason = force ? 'asked to build' : staleReason()
  if (reason === undefined) return {built: false}
  const started = Date.now()
  const script = join(root, 'scripts/build.mjs')
  const argv = 'Deno' in globalThis ? ['run', '-A', script] : [script]
  const run = spawnSync(process.execPath, argv, {cwd: root, stdio: ['ignore', 'inherit', 'inherit']})
  if (run.status !== 0) throw new Error(`building dist/ (${reason}) failed: scripts/build.mjs exited ${run.status ?? run.signal}`)
  log(`built dist/ in ${Date.now() - started} ms (${reason})`)
  return {built: true, reason}
}
