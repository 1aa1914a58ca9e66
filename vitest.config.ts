import {fileURLToPath} from 'node:url'
import {defineConfig} from 'vitest/config'
import {searchWorkerDefine} from './scripts/search-worker-bundle.mjs'

export default defineConfig(async () => ({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
  // Interface E's search thread, bundled from the sources under test, as the builds embed it:
  // tests on a store file then search on threads, as `serve` does.
  define: await searchWorkerDefine(fileURLToPath(new URL('.', import.meta.url))),
  esbuild: {jsx: 'automatic', jsxImportSource: 'hono/jsx'},
}))
