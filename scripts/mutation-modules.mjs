// The modules `npm run mutate` measures (stryker.config.mjs runs one, scripts/mutate.mjs each in
// turn), apart from the config so that test/scripts/test-lists.test.ts can check them without
// starting Stryker: every test file named exists, every pattern matches a file, every function
// named is found. The scores they are held to are in docs/architecture.md, "Mutation testing".
import {functionRanges} from './mutation-ranges.mjs'

/**
 * The modules where a silent bug costs most, each with the test files that guard it. Only tests
 * that load src/ in the vitest process can kill a mutant; CLI tests run the built dist/.
 */
export const MODULES = {
  balance: {
    // 637 of 718 mutants detected in one run of the whole module (88.7%, 2026-11-29; SQLite, so
    // the PostgreSQL batch path's 46 count as survivors): the row "ledger, the whole module" in
    // docs/architecture.md.
    break: 88,
    // The ledger's service, one module per part (service.ts only names them together), its
    // invariants and its edge parser.
    mutate: [
      'src/interfaces/balance/decide.ts',
      'src/interfaces/balance/withdraw.ts',
      'src/interfaces/balance/postings.ts',
      'src/interfaces/balance/queries.ts',
      'src/interfaces/balance/views.ts',
      'src/interfaces/balance/invariants.ts',
      'src/interfaces/balance/body.ts',
      'src/interfaces/balance/decimal-json.ts',
      // The writer's memory of the ledger (2026-12-02): joined after the 88.7% run, not measured since.
      'src/interfaces/balance/ledger.ts',
    ],
    tests: [
      'test/interfaces/balance/ledger-memory.test.ts',
      'test/interfaces/balance/ledger-invariants.test.ts',
      'test/interfaces/balance/api.test.ts',
      'test/interfaces/balance/ledger.property.test.ts',
      'test/interfaces/balance/ledger-boundaries.test.ts',
      'test/interfaces/balance/ledger-records.test.ts',
      'test/interfaces/balance/body-structure.test.ts',
      'test/interfaces/balance/body.test.ts',
      'test/interfaces/balance/decimal-json.test.ts',
      'test/interfaces/balance/control-characters.test.ts',
      'test/interfaces/balance/deactivation-race.test.ts',
    ],
  },
  throttle: {
    // 92.3% for throttle.ts (hash-queue.ts joined the module after that run).
    break: 92,
    mutate: ['src/registry/throttle.ts', 'src/registry/hash-queue.ts'],
    tests: ['test/registry/throttle.test.ts', 'test/registry/guessing-limits.test.ts', 'test/registry/hash-queue.test.ts'],
  },
  signon: {
    // 414 of 458 mutants killed over its three rows (90.4%).
    break: 90,
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
      'test/interfaces/signon/code-redemption.test.ts',
      'test/interfaces/signon/authorize-request-checks.test.ts',
      'test/interfaces/signon/session-same-instant.test.ts',
      'test/interfaces/signon/token-and-session-rules.test.ts',
    ],
  },
  outbox: {
    // 447 of 512 mutants over its two rows (87.3%).
    break: 87,
    // The runner both outboxes share (2026-12-02) came out of worker.ts: the score above is of the
    // two files before that move, with the same tests.
    mutate: ['src/interfaces/partner/outbox.ts', 'src/interfaces/partner/worker.ts', 'src/store/outbox-runner.ts'],
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
      'test/interfaces/signon/backchannel-logout.test.ts',
    ],
  },
  summary: {
    // 112 of 124 (90.3%).
    break: 90,
    // What a summary counts and what a call is charged, by function (the whole files hold 676
    // mutants, hours at concurrency 1 on two shared cores). calls.ts: the allowance and its
    // spending; repository.ts: which terms are read from the per-day statistics, and the counting
    // of whole days and ragged edges.
    mutate: [],
    functions: {
      'src/interfaces/conversations/calls.ts': ['allowance', 'spendAllowance'],
      'src/interfaces/conversations/repository.ts': ['summaryShape', 'totaller', 'sumRows', 'countPlan'],
    },
    tests: [
      'test/interfaces/conversations/summary-days.test.ts',
      'test/interfaces/conversations/term-days.test.ts',
      'test/interfaces/conversations/errors.test.ts',
      'test/interfaces/conversations/limits.test.ts',
      'test/interfaces/conversations/summary-query-limits.test.ts',
      'test/interfaces/conversations/summary-midnight-windows.test.ts',
      'test/interfaces/conversations/call-charges.test.ts',
    ],
  },
}

/**
 * What Stryker mutates for a module: its whole files, then each function it names as the
 * `file:start-end` lines that function spans in today's source.
 */
export function mutatedParts(root, module) {
  const named = Object.entries(module.functions ?? {}).flatMap(([file, names]) => functionRanges(root, file, names))
  return [...module.mutate, ...named]
}
