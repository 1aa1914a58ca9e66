/** Interface B's tunables: the outbox's schedule and its requests to partners, each with its reason. */
export const partnerConfig = {
  /** Waits after the 1st, 2nd, … failed delivery attempt. */
  retryScheduleSeconds: [5, 30, 120, 600, 3600, 3 * 3600] as const,
  /** Then one attempt every 6 hours … */
  retryEverySeconds: 6 * 3600,
  /** … until 3 days after the first attempt, when the delivery is marked failed. */
  giveUpAfterSeconds: 3 * 86400,
  /** One partner request, connection to last byte. */
  requestTimeoutMs: 10_000,
  /** A claimed delivery stays reserved this long past the request timeout before another sender may take it. */
  leaseSlackMs: 20_000,
  /** `serve`'s delivery worker looks for due deliveries at least this often, besides being woken by new ones. */
  pollMs: 500,
  /**
   * A delivery's result that cannot be written (the store restarting) is tried again after
   * waits doubling from 0.1 s to 2 s, until the lease is nearly over: a push that reached the
   * partner is recorded rather than sent twice.
   */
  recordRetryMs: {first: 100, most: 2_000},
  /** Members per quota-list PUT when pushing a long list. */
  memberChunk: 1000,
  /**
   * Bytes of a partner's answer to a push that are read: only its status counts and the start
   * of an error text is kept, so 64 KiB is plenty; the connection is closed on the rest, and a
   * partner answering hundreds of MB costs no memory.
   */
  responseBodyLimitBytes: 64 * 1024,
  /**
   * verify-partner reads GET answers (a quota's member list) and compares them whole: 4 MiB
   * holds its few test records many times over; a longer answer fails its check unread.
   */
  verifyResponseBodyLimitBytes: 4 * 1024 * 1024,
  /**
   * How far a signed push's time may be from a receiving partner's clock (partner-serve,
   * verify-partner's checks): the 5 minutes Standard Webhooks suggests, wide enough for clock
   * drift and a slow request, short enough that a captured push cannot be replayed later.
   */
  signatureToleranceSeconds: 5 * 60,
} as const
