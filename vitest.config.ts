import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Tests hash hundreds of passwords: at the shipped cost (2^17) that alone would take minutes.
    // test/lib/hashing.test.ts checks the shipped default; every spawned CLI inherits this too.
    env: {MEDPANEL_PASSWORD_COST: '14'},
  },
  esbuild: {jsx: 'automatic', jsxImportSource: 'hono/jsx'},
})
