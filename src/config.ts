import {readFileSync} from 'node:fs'
import {join} from 'node:path'
/**
 * The tunables every part of medpanel shares, each with its value and why it is that value: the
 * HTTP server's, the grants', the caches', the passwords' and guessing limits', the metrics' and
 * the store's. Each interface keeps its own in its folder (interfaces/NAME/config.ts), in the same
 * form, so this base module names no interface's concepts. Modules read their numbers from there
 * or here (some keep a short local alias). docs list these with the same reasons. Values an
 * operator sets per deployment (addresses, the store, the password cost) are flags and
 * environment variables, not this table; the variables that are not a flag's are read and checked
 * here too (`environment`, below), once, when a command starts.
 */
export const config = {
  http: {
    /**
     * Bytes of an answer from another server that are read when its caller names no bound of its
     * own (each caller does: a partner push, a relying party's key set or logout endpoint): only
     * a status and the start of a text matter, and the connection is closed on the rest, so a
     * server answering hundreds of MB costs no memory.
     */
    outboundBodyLimitBytes: 64 * 1024,
    /**
     * Largest request body any route reads (forms, token requests, withdrawals). Every body the
     * interfaces take is a few hundred bytes; 16 KiB leaves room and keeps a flood of large bodies
     * from costing memory.
     */
    requestBodyLimitBytes: 16 * 1024,
    /**
     * Characters of a refusal's reason (and of each of its fields) that its log line keeps: a
     * reason may quote what the caller sent (a client_id of up to 2 KB), and one line per refused
     * request must stay a line, not a copy of the request.
     */
    loggedReasonMaxChars: 500,
    /** Node's server limits: slow-header and slow-body senders are cut off (slowloris). */
    server: {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      /** How often Node checks the two timeouts above. */
      checkEveryMs: 1_000,
      maxHeaderSize: 16 * 1024,
      /** Longer than the 60 s idle timeout of common load balancers, so they close first. */
      keepAliveTimeoutMs: 65_000,
      /**
       * On stop, requests in flight get this long to finish before their connections are closed,
       * so a stop always ends: as long as a search's budget, the longest a request normally runs
       * (a streamed data answer may run longer and is cut).
       */
      closeGraceMs: 10_000,
      /**
       * `serve --drain-seconds`: on SIGTERM, how long requests in flight and the delivery
       * worker's send get to finish before serve gives up on them and exits non-zero. 30 s is the
       * longest a request may take to arrive (requestTimeoutMs) and covers a partner send
       * (interfaces/partner/config.ts, requestTimeoutMs: 10 s) with room; it also stays well inside systemd's default
       * stop timeout (90 s), so systemd never has to SIGKILL a serve that is still draining.
       */
      drainSeconds: 30,
    },
  },

  /**
   * Grants (src/grants/): what every interface checks of what sign-on hands out. Each interface's
   * own settings are in its folder (interfaces/NAME/config.ts).
   */
  grants: {
    /** "Last used" of a token is written at most this often, so a busy token costs no writes. */
    tokenUseNoteEveryMs: 10 * 60 * 1000,
    /**
     * A DPoP proof (RFC 9449) is accepted for a minute after its iat, and its jti is kept that
     * long: a proof is made for one request and sent at once, and the nonce it must carry already
     * stops one made ahead of time. The skew forgives a client's clock this far either way.
     */
    dpopProofSeconds: 60,
    dpopClockSkewSeconds: 10,
    /**
     * A DPoP nonce is good for the period it was made in and the next: five minutes each, so a
     * busy client fetches a new one at most every five minutes (one extra round trip), and a proof
     * made more than ten minutes ahead is worthless.
     */
    dpopNonceSeconds: 300,
    /**
     * The replay store's rows (spent DPoP proofs and client assertions) past their age are deleted
     * at most this often per process, not at every proof.
     */
    replaySweepEveryMs: 10_000,
  },

  /**
   * In-process caches, in entries. Each is bounded so a flood of distinct ids costs a known amount
   * of memory (an entry is a row or a digest: well under a kilobyte). The version caches
   * (store/version-cache.ts) keep rows only while the store has not changed (SQLite: no commit
   * since; PostgreSQL: no notification since) and are emptied when full.
   */
  caches: {
    /** Token rows looked up by bearer-token hash: every call of C, D and E presents a token. */
    tokenRows: 10_000,
    /**
     * SHA-256 digests of presented tokens: a busy client presents the same token many times a
     * second. As many as the token rows above, since each row is looked up by one.
     */
    tokenHashes: 10_000,
    /**
     * When each token was last noted as used (grants.tokenUseNoteEveryMs). Larger than the row
     * cache: a note is a number, and forgetting it only costs one extra write.
     */
    tokenUseNotes: 50_000,
    /** Registered clients: every call of C, D and E reads its client, and a deployment has tens of them. */
    clients: 1_000,
    /**
     * SHA-256 digests of client secrets that matched their client lately (a wrong secret is never
     * kept): a client sends its secret on every token, revocation and introspection call, and in
     * `serve` one digest cost 10-12 µs of CPU, as much as the rest of the check (bench:introspect).
     */
    clientSecrets: 1_000,
    /** Authorization headers of HTTP Basic parsed lately (http/basic-auth.ts): one or two per client and partner. */
    basicHeaders: 1_000,
    /**
     * DPoP proofs' headers, each checked once with the key it names imported and its thumbprint (a
     * client signs every proof with one key, under one header); and, apart, the imported keys by
     * thumbprint and algorithm.
     */
    dpopKeys: 10_000,
  },

  /** Member passwords (lib/hashing.ts): scrypt with r = 8, p = 1 and a cost of N = 2^cost. */
  passwords: {
    /**
     * 17 (128 MiB; 0.7 s per hash on the 2-core EPYC build machine, bench:signin-flood's quiet
     * sign-in, 0.28 s on an earlier machine) is OWASP's floor for
     * scrypt. MEDPANEL_PASSWORD_COST changes it, which only sets how new hashes are made: every
     * stored hash carries its own parameters.
     */
    defaultCost: 17,
    /** 14 (16 MiB, tens of milliseconds) is what tests run with; a cheaper hash makes a stolen store's passwords cheap to guess. */
    minCost: 14,
    /** 20 takes 1 GiB and seconds per hash: more would let a few sign-ins exhaust the machine. */
    maxCost: 20,
  },

  /** Guessing limits (registry/throttle.ts), counted in the store. */
  throttle: {
    /** Wrong passwords for one member from one address before each further one locks that pair for a doubling time. */
    memberAddressFreeFailures: 5,
    memberAddressMaxLockSeconds: 900,
    /**
     * Wrong passwords for one member from anywhere: ten addresses' worth of the pair allowance, so
     * a handful of guessing addresses never lock the member out elsewhere, while a guesser spread
     * over many is still slowed. Capped lower, since the real member waits it out too.
     */
    memberFreeFailures: 50,
    memberMaxLockSeconds: 300,
    /**
     * Sign-ins for one e-mail (a member's or a made-up one alike) that may be checked at once in
     * a process; what is beyond is refused before it joins the hash queue. There is no such bound
     * per address: a hospital's or a carrier's shared exit would then let a flood from it refuse
     * the members behind it. One address is kept from filling the queue by the queue itself
     * (fair by recent hashes, and only e-mails that name a member wait there).
     */
    passwordChecksInFlightPerMember: 4,
    /**
     * Sign-ins that may wait for a hash slot (serve --password-hashes; registry/hash-queue.ts), per
     * slot: eight hashes' wait (at the shipped cost, 2 to 6 seconds on today's cores) is as long
     * as a person at the form should wait; beyond it a 429 at once says to try again.
     */
    passwordHashesWaitingPerSlot: 8,
    /**
     * How fast the hash queue forgets whom it served: a caller's count of recent hashes halves
     * every minute. Long enough to tell a flood's addresses (dozens of hashes a minute each) from
     * a member at the form (one), short enough that an office whose sign-ins came in a burst is
     * an ordinary caller again a few minutes later.
     */
    passwordHashUseHalfLifeSeconds: 60,
    /**
     * Wrong client secrets or API keys (per kind) from one address before its further wrong ones
     * get 429 instead of 401. A right one is always accepted: 256 random bits are not guessed.
     */
    guesserFreeFailures: 20,
    guesserMaxLockSeconds: 900,
    /** A failure older than this no longer counts. */
    forgetAfterSeconds: 3600,
    /**
     * Wrong passwords from one address across every member (IPv6: its /64) within the window
     * below, before that address's further sign-ins, right passwords included, wait a doubling
     * time: password spraying tries one common password on many members, which no per-member
     * count sees. 30 in 15 minutes is far above what the people behind one address mistype (an
     * office or a hospital's shared exit is better exempted with serve --guessing-allow).
     */
    addressFreeFailures: 30,
    addressWindowSeconds: 900,
    addressMaxLockSeconds: 300,
    /**
     * A browser a member signed in from keeps a device cookie this long (OWASP's device cookies):
     * its failures count against that cookie only, never the member-wide or the address limit,
     * so guesses from elsewhere never lock a member out of their own browser.
     */
    deviceCookieSeconds: 180 * 86400,
  },

  metrics: {
    /**
     * Seconds, for HTTP answers: token info answers in well under a millisecond when idle and a
     * few under load; a sign-in hashes for ~0.1 s; exports and searches run to seconds.
     */
    httpSecondsBuckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    /** Seconds, for a store commit with its sync to disk: ~0.1 ms on tmpfs, a few ms on a disk, more is trouble. */
    commitSecondsBuckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    /** Requests per group commit, by powers of two up to the writer's largest batch (256, below). */
    commitBatchBuckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  },

  store: {
    /** Writes committed together by the group writer; more only lengthens the longest wait. */
    maxWriteBatch: 256,
    /**
     * Milliseconds a record nobody waits for (writeLater: interface E's summary calls) is held
     * before it is written, with every other one that came meanwhile, in one transaction: under a
     * steady stream of calls one commit carries many records, and the store's content version (which
     * the caches key on) moves once per batch, not once per call. A crash of the process may lose
     * this long's records; a clean stop writes them.
     */
    laterWritesMs: 50,
    /**
     * PostgreSQL: requests per batch. Each savepoint that writes is a subtransaction with an id of
     * its own, and a PostgreSQL backend keeps only 64 of those in shared memory; past that every
     * other session's snapshot has to look them up on disk (subtransaction overflow). 32 leaves
     * room for the savepoints a request opens inside its own.
     */
    postgresMaxWriteBatch: 32,
    /**
     * PostgreSQL: attempts of one batch before a run of serialization failures or deadlocks is
     * answered as a busy store (503). A batch meets one only with a write outside the batches, so
     * a run of twelve means the store is busy, not unlucky.
     */
    postgresConflictAttempts: 12,
    /**
     * SQLite: how long a statement waits for another process's write lock before it fails as busy.
     * The group writer holds it for one commit (milliseconds); a backup or a migration in another
     * process may hold it longer, and a CLI command should wait that out, not fail.
     */
    sqliteBusyTimeoutMs: 5_000,
    /**
     * PostgreSQL: batches of read-committed writes (withdrawals, which lock their own rows) that
     * one process runs at once, each on a connection of its own. Each account's withdrawals always
     * go to the same lane, and a withdrawal batch costs four round trips whatever its size, so more
     * lanes mean smaller batches and more round trips for the same work, and every `serve`
     * process on the database adds its own. bench:balance on the 2-core build machine,
     * PostgreSQL / SQLite withdrawals with 10 summary readers: 2026-11-26, single 3-round runs,
     * 1 lane 0.56, 2 lanes 0.60, 3 lanes 0.60, 4 lanes 0.57; 2026-11-27, the same day's runs,
     * 1 lane 0.62-0.78 over three runs (24.3-24.5 writes per commit), 2 lanes 0.52-0.66 over four
     * runs (12.3-12.6 per commit). With two `serve` processes of 2 lanes each,
     * batches fell to 6.1-6.3 writes; with 1 lane each, 12.2-12.3. Since then a lane's batches take
     * turns across all processes (postgres/writer.ts), so this is the number of withdrawal batches
     * at once in the whole cluster: with 1, batches of 22.5-23.8 with two processes, 15.2-16.5
     * with three. The default of `--write-lanes` (MEDPANEL_WRITE_LANES), which operators raise for
     * more hosts. See docs/benchmarks.md and docs/operations.md.
     */
    postgresWriteLanes: 1,
    /** The most `--write-lanes` takes: each lane holds a pooled connection while its batch runs. */
    postgresWriteLanesMax: 32,
    /**
     * PostgreSQL's cache listener (store/postgres/listen.ts), one connection per process. While it
     * is down the process caches nothing and reads every check from the database, so it
     * reconnects at once, then after waits that double from 0.1 s to at most 5 s: soon after the
     * server is back, without hammering one that is not.
     */
    listener: {
      minRetryMs: 100,
      maxRetryMs: 5_000,
      /** How often the idle connection is checked, so one that died silently (a dropped network) is noticed. */
      heartbeatMs: 10_000,
      /** A connection attempt that takes longer than this has failed; the next one follows the waits above. */
      connectTimeoutMs: 10_000,
      /** A dropped connection's socket is destroyed this long after a polite end was asked for, in case its peer is gone. */
      dropAfterMs: 1_000,
      /** With --listen-url: how long the listener waits to hear the store's own test notification. Not heard on a URL never heard before, the caches stay off; on one heard before, the listener tries again. */
      probeTimeoutMs: 5_000,
    },
    /**
     * A database URL of several hosts (postgres/hosts.ts): how long asking one host whether it is
     * the primary may take before the next is asked. Long enough for a loaded server, short enough
     * that a host whose machine is gone (no refusal, only silence) delays a failover by little.
     */
    hostProbeTimeoutMs: 3_000,
    /** Prepared statements kept per connection, and how much SQL text they may hold. */
    statementCache: {entries: 256, textBytes: 512 * 1024, largest: 16 * 1024},
  },
} as const

/** The SQLite libraries medpanel can run on (store/sqlite/). */
export const SQLITE_DRIVERS = ['better-sqlite3', 'node:sqlite'] as const

/**
 * The settings taken from environment variables that stand for no flag. Variables that do stand
 * for a flag (MEDPANEL_DB, MEDPANEL_POOL_SIZE, MEDPANEL_LOG_FORMAT, …) are read by oclif with the
 * flag, under the flag's rules, when the command's line is parsed: also at start.
 */
export interface Environment {
  /** MEDPANEL_PASSWORD_COST: scrypt cost of new password hashes (config.passwords). */
  passwordCost: number
  /** MEDPANEL_SECRET_KEY, decoded: the keys that seal stored secrets, the first sealing; undefined when unset. */
  secretKeys: Buffer[] | undefined
  /** MEDPANEL_SQLITE_DRIVER: the SQLite library asked for; undefined for the runtime's own choice. */
  sqliteDriver: (typeof SQLITE_DRIVERS)[number] | undefined
  /** MEDPANEL_NOW: the instant every command's clock is held at (reproducible test data); undefined for the real time. */
  now: Date | undefined
  /** MEDPANEL_DEBUG (any value): an `Error:` line is followed by its stack. */
  debug: boolean
}

/** A bad environment variable: its message names the variable and what it accepts. */
export class SettingError extends Error {
  override name = 'SettingError'
}

/**
 * Keys in the form MEDPANEL_SECRET_KEY and a store's key file hold them: base64 32-byte keys
 * separated by commas or white space, the first sealing, the rest only opening.
 */
export function parseSecretKeys(text: string, where: string): Buffer[] {
  const keys = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((encoded) => Buffer.from(encoded, 'base64'))
  if (keys.length === 0 || keys.some((key) => key.length !== 32)) {
    throw new SettingError(`${where} must hold one or more base64-encoded 32-byte keys (the first seals, the rest only open)`)
  }
  return keys
}

/** The value of a variable, or undefined when it is unset or empty (a script's unset variable). */
function given(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}

/**
 * A secret systemd handed over with `LoadCredential=NAME:…` (deploy/medpanel.service): the file
 * NAME in $CREDENTIALS_DIRECTORY, trimmed; undefined when there is no such directory or file.
 * Stands in for a secret's variable when that is unset, so the secret is in no environment.
 */
export function credential(env: Record<string, string | undefined>, name: string): string | undefined {
  const directory = given(env, 'CREDENTIALS_DIRECTORY')
  if (directory === undefined) return undefined
  let text: string
  try {
    text = readFileSync(join(directory, name), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new SettingError(`cannot read the credential ${name} in CREDENTIALS_DIRECTORY: ${(error as Error).message}`)
  }
  return text.trim() || undefined
}

/** Reads and checks every setting in `env`; the first bad one is a SettingError naming it. */
export function readEnvironment(env: Record<string, string | undefined>): Environment {
  const {defaultCost, minCost, maxCost} = config.passwords
  const costText = given(env, 'MEDPANEL_PASSWORD_COST')
  const passwordCost = costText === undefined ? defaultCost : /^\d+$/.test(costText.trim()) ? Number(costText) : Number.NaN
  if (!Number.isInteger(passwordCost) || passwordCost < minCost || passwordCost > maxCost) {
    throw new SettingError(`MEDPANEL_PASSWORD_COST must be an integer from ${minCost} to ${maxCost} (got "${costText}")`)
  }

  const keyText = given(env, 'MEDPANEL_SECRET_KEY')
  const keyCredential = keyText === undefined ? credential(env, 'medpanel-secret-key') : undefined
  const secretKeys =
    keyText !== undefined
      ? parseSecretKeys(keyText, 'MEDPANEL_SECRET_KEY')
      : keyCredential !== undefined
        ? parseSecretKeys(keyCredential, 'the credential medpanel-secret-key')
        : undefined

  const driver = given(env, 'MEDPANEL_SQLITE_DRIVER')
  if (driver !== undefined && !(SQLITE_DRIVERS as readonly string[]).includes(driver)) {
    throw new SettingError(`MEDPANEL_SQLITE_DRIVER must be one of ${SQLITE_DRIVERS.join(', ')} (got "${driver}")`)
  }

  const nowText = given(env, 'MEDPANEL_NOW')
  const now = nowText === undefined ? undefined : new Date(nowText)
  if (nowText !== undefined && (Number.isNaN(now!.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(nowText))) {
    throw new SettingError(`MEDPANEL_NOW must be an ISO 8601 date and time, e.g. 2026-01-01T00:00:00Z (got "${nowText}")`)
  }

  return {
    passwordCost,
    secretKeys,
    sqliteDriver: driver as Environment['sqliteDriver'],
    now,
    debug: given(env, 'MEDPANEL_DEBUG') !== undefined,
  }
}

let current: Environment | undefined

/**
 * This process's settings, read from its environment on first use and kept: every command reads
 * them as it starts (BaseCommand.init), so a bad value stops it there with one `Error:` line
 * naming the variable, before it serves or writes anything. The few other reads of process.env
 * (a flag's variable read before flags are parsed, a `--NAME-from-env` secret, systemd's
 * NOTIFY_SOCKET and credentials, libuv's thread pool size, two settings made for libraries, where
 * bin/run.js keeps V8's code cache, read before this module loads) are
 * listed with their reasons in test/architecture/environment-reads.test.ts, which fails on a new one.
 */
export function environment(): Environment {
  current ??= readEnvironment(process.env)
  return current
}

/** The settings if they have been read and were good, else undefined: for reporting a failure, which must not fail itself. */
export function environmentIfRead(): Environment | undefined {
  return current
}

/** Forgets the settings read, so the next use reads the environment again (and refuses it there if bad). */
export function forgetEnvironment(): void {
  current = undefined
}

/** Reads the environment again: for tests that change process.env in their own process. */
export function rereadEnvironment(): Environment {
  forgetEnvironment()
  return environment()
}
