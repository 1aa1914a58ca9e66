// Which test files each run of scripts/test.mjs takes or leaves out, and which files vitest.config.ts
// runs isolated: paths and folders under test/, kept apart from the runner so that
// test/scripts/test-lists.test.ts can check every entry still names a file (a moved test would
// otherwise drop out of a run without a word).

/**
 * Test files that need a module graph of their own: they mock a module (vi.mock), re-import the
 * sources (vi.resetModules), or fake the timers. Every other file shares its worker's modules
 * with the files that worker ran before it, so the sources are imported once per worker instead
 * of once per file, which was most of the in-process tests' time (docs/architecture.md, Tests).
 */
export const ISOLATED = [
  'test/architecture/grant-recipe.test.ts',
  'test/interfaces/balance/ledger-invariants.test.ts',
  'test/interfaces/partner/record-after-store-outage.test.ts',
  'test/interfaces/partner/lease-takeover.test.ts',
  'test/interfaces/partner/worker.test.ts',
  'test/interfaces/signon/signing-keys.test.ts',
  'test/lib/hashing.test.ts',
]

/*
 * What node22 and deno run: the tests whose outcome can depend on the runtime, as vitest file
 * filters (a folder takes every test under it). Everything else is JavaScript over Hono's
 * app.request and an in-memory store, or text checks, and runs the same on every runtime: Node 20
 * runs it once. Each entry says what the runtime can change there.
 */
/*
 * The tests of SQLite store files as such: the file format, durability and backups, statement
 * caching, store files from earlier releases migrated, sealed secrets, file modes, the CLI's
 * refusals about store files. Every runtime runs them (each has its own SQLite driver);
 * PostgreSQL does not. The rest of test/store (test/store/postgres/, the prepared queries, the
 * store's failures) is not about files.
 */
export const SQLITE_FILE_TESTS = [
  'test/store/disk-full-cli.test.ts',
  'test/store/durability.test.ts',
  'test/store/file-permissions.test.ts',
  'test/store/permission-errors-cli.test.ts',
  'test/store/schema.test.ts',
  'test/store/secrets.test.ts',
  'test/store/statement-cache.test.ts',
  'test/store/upgrade.test.ts',
]
export const RUNTIME_TESTS = [
  // The SQLite drivers themselves (better-sqlite3 against node:sqlite): file format, durability,
  // statement caching, store files from earlier releases migrated, sealed secrets, file modes.
  ...SQLITE_FILE_TESTS,
  'test/store/prepared.test.ts',
  'test/interfaces/balance/ledger.property.test.ts',
  'test/interfaces/balance/deactivation-race.test.ts',
  // What the app reads from the HTTP server adapter's request, in-process.
  'test/http/hono-node.test.ts',
  // Interface E's search threads (worker_threads, each its own read-only connection).
  'test/interfaces/conversations/search-threads.test.ts',
  'test/interfaces/conversations/fair-share.test.ts',
  // The runtime's fetch against partners that misbehave, its URL parser on partner URLs, and its
  // scrypt for passwords.
  'test/interfaces/partner/hostile-partner.test.ts',
  'test/interfaces/partner/partner-url-safety.test.ts',
  'test/lib/hashing.test.ts',
  // A few `serve` smoke tests under that runtime: its HTTP server (Host checks, slow clients'
  // header deadline), the signing keys and JWKS its crypto makes as a relying party sees them,
  // DPoP proofs and client assertions its WebCrypto verifies (importing the key each carries, or
  // fetching a jwks_uri), and logout tokens its fetch posts.
  'test/e2e/allowed-hosts.test.ts',
  'test/e2e/slow-clients.test.ts',
  'test/e2e/oidc-openid-client.test.ts',
  'test/e2e/dpop.test.ts',
  'test/e2e/private-key-jwt.test.ts',
  'test/e2e/backchannel-logout.test.ts',
  // Ctrl-C, prompts on a terminal and serve's life cycle, which each runtime's process and TTY
  // handling decide.
  'test/commands/prompt-interrupt.test.ts',
  'test/commands/register-client-prompts.test.ts',
  'test/commands/serve-idle.test.ts',
  'test/interfaces/balance/withdraw-tty.test.ts',
  'test/interfaces/partner/progress-tty.test.ts',
]
/*
 * Left to Node 20 alone, though they once ran on every runtime: what they check is the same on
 * each, and each runtime's part of it is above. The relying-party libraries' sign-ins beyond
 * openid-client (their protocol is the runtime-independent part), the CLI's scenarios (status,
 * data loss, seeding, balances, partner pushes: commands over a store, whose SQLite part is in
 * SQLITE_FILE_TESTS), the crash soak (node:sqlite's durability is test/store/durability.test.ts),
 * metrics and the search event loop.
 */

/*
 * What the PostgreSQL run takes: every test that opens a store in-process (the interfaces, grants, the
 * registry, the operator queries, the app, metrics, the store layer), the commands whose
 * PostgreSQL side differs (copying stores, PostgreSQL's refusals and texts, status), and the
 * multi-process and fault tests that only a shared database server can have. The CLI's other
 * scenarios, the docs and the relying-party libraries run the same code over a store either
 * way: Node 20 runs them on SQLite.
 */
export const ON_POSTGRES = [
  'test/interfaces/',
  'test/grants/',
  'test/registry/',
  'test/operator/',
  'test/app/',
  'test/metrics/',
  'test/store/',
  'test/http/',
  'test/commands/copy-store.test.ts',
  'test/commands/postgres-refusals.test.ts',
  'test/commands/postgres-text.test.ts',
  'test/commands/status.test.ts',
  'test/e2e/multi-process.test.ts',
  'test/e2e/faults-db-restart.test.ts',
  'test/e2e/faults-kill.test.ts',
  'test/e2e/cache-notify.test.ts',
  'test/e2e/pgbouncer.test.ts',
  'test/e2e/read-replica.test.ts',
  'test/e2e/signals.test.ts',
]

/*
 * Left out of the PostgreSQL run: the tests of SQLite files as such (the store's file format,
 * durability and backups, the single executable alone in an empty root and in the container
 * image, the CLI's refusals about store files), and the tests that never open a store, which
 * would run exactly as on Node 20.
 */
export const NOT_ON_POSTGRES = [
  ...SQLITE_FILE_TESTS,
  // How a PostgreSQL error becomes an answer: its own error objects, no store opened.
  'test/store/failure.test.ts',
  // The choice among a URL's hosts, against stand-in servers (multi-host.test.ts is the real one).
  'test/store/postgres/hosts.test.ts',
  'test/e2e/crash-soak.test.ts',
  // Makes a pg_auto_failover formation of its own, whichever store the run is on: Node 20 runs it.
  'test/e2e/failover.test.ts',
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
export const STARTS_PROCESSES = [
  'test/e2e/**',
  'test/commands/**',
  'test/docs/**',
  'test/scripts/**',
  'test/store/disk-full-cli.test.ts',
  'test/store/file-permissions.test.ts',
  'test/store/permission-errors-cli.test.ts',
  'test/store/secrets.test.ts',
  'test/store/upgrade.test.ts',
  'test/app/openapi-lint.test.ts',
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
