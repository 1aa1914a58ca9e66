// Mutation testing with StrykerJS and its vitest runner: `npm run mutate [module…]`
// (scripts/mutate.mjs), not part of `npm test`. Each module is mutated on its own, with only the
// in-process test files that exercise it (vitest.stryker.config.ts); the scores are in
// docs/architecture.md, "Mutation testing". Everything a run writes stays under reports/mutation/.

/**
 * The modules where a silent bug costs most, each with the test files that guard it. Only tests
 * that load src/ in the vitest process can kill a mutant; CLI tests run the built dist/.
 */
export const MODULES = {
  balance: {
    // The ledger's service, one module per part (service.ts only names them together), and its edge parser.
    mutate: [
      'src/interfaces/balance/decide.ts',
      'src/interfaces/balance/withdraw.ts',
      'src/interfaces/balance/postings.ts',
      'src/interfaces/balance/queries.ts',
      'src/interfaces/balance/views.ts',
      'src/interfaces/balance/invariants.ts',
      'src/interfaces/balance/body.ts',
      'src/interfaces/balance/decimal-json.ts',
    ],
    tests: [
      'test/interfaces/balance/ledger-invariants.test.ts',
      'test/interfaces/balance/api.test.ts',
      'test/interfaces/balance/ledger.property.test.ts',
      'test/interfaces/balance/ledger-edges.test.ts',
      'test/interfaces/balance/ledger-records.test.ts',
      'test/interfaces/balance/body-structure.test.ts',
      'test/interfaces/balance/control-characters.test.ts',
      'test/interfaces/balance/deactivation-race.test.ts',
    ],
  },
  throttle: {
    mutate: ['src/registry/throttle.ts', 'src/registry/hash-queue.ts'],
    tests: ['test/interfaces/throttle.test.ts', 'test/interfaces/throttle-limits.test.ts', 'test/registry/hash-queue.test.ts'],
  },
  signon: {
    // Sign-on's service, one module per concern (the grants under flows/), as it was one file.
    mutate: [
      'src/interfaces/signon/authorize.ts',
      'src/interfaces/signon/client-auth.ts',
      'src/interfaces/signon/consent.ts',
      'src/interfaces/signon/flows/*.ts',
      'src/interfaces/signon/introspection.ts',
      'src/interfaces/signon/issue-token.ts',
      'src/interfaces/signon/logout.ts',
      'src/interfaces/signon/resources.ts',
      'src/interfaces/signon/sessions.ts',
      'src/interfaces/signon/sign-in.ts',
      'src/interfaces/signon/tokens.ts',
    ],
    tests: [
      'test/interfaces/signon/token.test.ts',
      'test/interfaces/signon/authorize.test.ts',
      'test/interfaces/signon/sessions.test.ts',
      'test/interfaces/signon/token-death.test.ts',
      'test/interfaces/signon/info.test.ts',
      'test/interfaces/signon/oidc.test.ts',
      'test/interfaces/signon/hardening.test.ts',
      'test/interfaces/signon/applications.test.ts',
      'test/interfaces/signon/discovery.test.ts',
      'test/interfaces/signon/code-exchange-edges.test.ts',
      'test/interfaces/signon/authorize-request-edges.test.ts',
      'test/interfaces/signon/session-same-instant.test.ts',
      'test/interfaces/signon/service-rest.test.ts',
    ],
  },
  outbox: {
    mutate: ['src/interfaces/partner/outbox.ts', 'src/interfaces/partner/worker.ts'],
    // hostile-partner.test.ts is left out: most of it runs the built CLI, which has no dist/ in
    // Stryker's sandbox, so the initial run fails.
    tests: [
      'test/interfaces/partner/worker.test.ts',
      'test/interfaces/partner/service.test.ts',
      'test/interfaces/partner/lease-takeover.test.ts',
      'test/interfaces/partner/delivery-outcomes.test.ts',
      'test/interfaces/partner/queue-order-and-retry.test.ts',
      'test/interfaces/partner/record-after-store-outage.test.ts',
      'test/interfaces/partner/partner-choice.test.ts',
    ],
  },
  summary: {
    // What a summary counts and what a call is charged, as line ranges: the whole files hold 676
    // mutants, hours at concurrency 1 on two shared cores. calls.ts: the allowance and its
    // spending; repository.ts: which terms are read from the per-day statistics, and the counting
    // of whole days and ragged edges (summaryShape, totaller, countPlan).
    mutate: [
      'src/interfaces/conversations/calls.ts:116-129',
      'src/interfaces/conversations/calls.ts:254-267',
      'src/interfaces/conversations/repository.ts:210-215',
      'src/interfaces/conversations/repository.ts:274-322',
    ],
    tests: [
      'test/interfaces/conversations/summary-days.test.ts',
      'test/interfaces/conversations/term-days.test.ts',
      'test/interfaces/conversations/errors.test.ts',
      'test/interfaces/conversations/limits.test.ts',
      'test/interfaces/conversations/summary-query-edges.test.ts',
      'test/interfaces/conversations/summary-day-edges.test.ts',
      'test/interfaces/conversations/call-charges.test.ts',
    ],
  },
}

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
  mutate: module.mutate,
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
  thresholds: {high: 90, low: 80, break: null},
  timeoutMS: 10_000,
}
