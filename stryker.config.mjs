// Mutation testing with StrykerJS and its vitest runner: `npm run mutate [module…]`
// (scripts/mutate.mjs), not part of `npm test`. Each module is mutated on its own, with only the
// in-process test files that exercise it (vitest.stryker.config.ts); the scores are in
// docs/architecture.md, "Mutation testing". Everything a run writes stays under reports/mutation/.
import {fileURLToPath} from 'node:url'
import {MODULES, mutatedParts} from './scripts/mutation-modules.mjs'

export {MODULES}

const name = process.env.MEDPANEL_MUTATE_MODULE ?? 'balance'
const module = MODULES[name]
if (!module) throw new Error(`unknown module "${name}" (one of ${Object.keys(MODULES).join(', ')})`)
// Read by vitest.stryker.config.ts in each test runner process Stryker starts. Set beforehand, it
// narrows the run to those files (a quicker, weaker measure on a busy machine).
process.env.MEDPANEL_MUTATE_TESTS ||= module.tests.join(',')

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: {configFile: 'vitest.stryker.config.ts', related: false},
  mutate: mutatedParts(fileURLToPath(new URL('.', import.meta.url)), module),
  // Each mutant runs only the tests that reached its code.
  coverageAnalysis: 'perTest',
  // A mutant in code that runs on import (module-level constants) would need every test of the
  // module per mutant; they are left out of the run and the score.
  ignoreStatic: true,
  // The machine's two cores are shared: one test runner at a time.
  concurrency: 1,
  // Later runs retest only mutants whose code or covering tests changed.
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  tempDirName: 'reports/mutation/tmp',
  cleanTempDir: true,
  ignorePatterns: ['dist', 'bench', 'examples', 'reports', '/tmp', 'coverage', '*.db', '*.db-wal', '*.db-shm'],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: {fileName: `reports/mutation/${name}.html`},
  jsonReporter: {fileName: `reports/mutation/${name}.json`},
  clearTextReporter: {allowColor: false, logTests: false, reportMutants: false},
  // A run scoring under the module's documented score fails (`npm run mutate` exits 1).
  thresholds: {high: 90, low: 80, break: module.break},
  timeoutMS: 10_000,
}
