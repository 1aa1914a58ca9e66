import {fileURLToPath} from 'node:url'
import {configDefaults, defineConfig} from 'vitest/config'
import {searchWorkerDefine} from './scripts/search-worker-bundle.mjs'
// Files that mock modules, re-import the sources or fake timers: a module graph each.
import {ISOLATED} from './scripts/test-lists.mjs'

/**
 * Files a run leaves out (scripts/test.mjs: the fast run's and PostgreSQL's exclusions), as a JSON
 * array of globs: vitest applies its --exclude option to the root configuration only, not to the
 * projects below.
 */
const EXCLUDED: string[] = JSON.parse(process.env.MEDPANEL_TEST_EXCLUDE || '[]')

export default defineConfig(async () => ({
  test: {
    // Each project says which files it takes: extending the root merges arrays, so an include
    // here would give every file to both.
    projects: [
      // MEDPANEL_TEST_ISOLATE=1 isolates every file: a failure that goes away then came from a file before it.
      {
        extends: true,
        test: {
          name: 'shared',
          isolate: process.env.MEDPANEL_TEST_ISOLATE === '1',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...configDefaults.exclude, ...EXCLUDED, ...ISOLATED],
          // Repeated password hashes answered from memory (each still real scrypt), RSA signing
          // keys reused from one test to the next (each made by jose): see the files.
          setupFiles: ['test/helpers/hash-memo.ts', 'test/helpers/key-pool.ts'],
        },
      },
      {extends: true, test: {name: 'isolated', include: ISOLATED, exclude: [...configDefaults.exclude, ...EXCLUDED]}},
    ],
    // Time limits only catch a hang, never judge speed: a test that takes 10 s alone took over 60 s
    // on a 2-core machine loaded to 26 (six other builds and suites beside it, 2026-12-02), so the
    // limits are far above any run that is merely slow; a real hang still ends the run.
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    // More test files at once than cores: most of the suite waits on the CLI and serve processes
    // it starts, not on its own CPU (measured in docs/architecture.md, Tests).
    maxWorkers: Number(process.env.MEDPANEL_TEST_WORKERS) || 4,
    // Rebuilds dist/ (what the CLI tests run) when it is older than the sources.
    globalSetup: ['test/global-setup.ts'],
    // Tests hash hundreds of passwords: at the shipped cost (2^17) that alone would take minutes.
    // test/lib/hashing.test.ts checks the shipped default; every spawned CLI inherits this too.
    env: {MEDPANEL_PASSWORD_COST: '14'},
  },
  // Interface E's search thread, bundled from the sources under test, as the builds embed it:
  // tests on a store file then search on threads, as `serve` does.
  define: await searchWorkerDefine(fileURLToPath(new URL('.', import.meta.url))),
  esbuild: {jsx: 'automatic', jsxImportSource: 'hono/jsx'},
}))
