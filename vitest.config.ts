import {fileURLToPath} from 'node:url'
import {defineConfig} from 'vitest/config'
import {searchWorkerDefine} from './scripts/search-worker-bundle.mjs'

export default defineConfig(async () => ({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Time limits only catch a hang: they hold on a loaded 2-core machine with another suite
    // beside this one, where tests that take 10 s alone take three times that.
    testTimeout: 60_000,
    hookTimeout: 180_000,
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
