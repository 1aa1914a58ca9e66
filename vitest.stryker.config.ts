import {fileURLToPath} from 'node:url'
import {defineConfig} from 'vitest/config'
import {searchWorkerDefine} from './scripts/search-worker-bundle.mjs'

/**
 * The vitest configuration StrykerJS runs (stryker.config.mjs): the same settings as
 * vitest.config.ts, but only the test files of the module under mutation (MEDPANEL_MUTATE_TESTS,
 * comma-separated, set by stryker.config.mjs) and no build of dist/: a mutant lives only in the
 * sources vitest loads, so tests that run the built CLI could never see it and are left out.
 */
const tests = (process.env.MEDPANEL_MUTATE_TESTS ?? '').split(',').filter(Boolean)
if (tests.length === 0) throw new Error('MEDPANEL_MUTATE_TESTS is empty: run this through `npm run mutate`')

export default defineConfig(async () => ({
  test: {
    include: tests,
    setupFiles: ['test/helpers/mutation-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {MEDPANEL_PASSWORD_COST: '14'},
  },
  define: await searchWorkerDefine(fileURLToPath(new URL('.', import.meta.url))),
  esbuild: {jsx: 'automatic', jsxImportSource: 'hono/jsx'},
}))
