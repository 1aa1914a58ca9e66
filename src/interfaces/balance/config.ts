/** Interface C's tunables, each with its reason (src/config.ts keeps the shared ones, the request body limit among them). */
export const balanceConfig = {
  /**
   * Deepest nesting a withdrawal body may have (the top-level object is level 1). A real body has
   * two (the body and member_details); deeper is refused with 400 before the exact-amount reader,
   * which recurses once per level, could run out of stack on the 8,000 levels 16 KiB can hold.
   */
  bodyMaxDepthLevels: 32,
  caches: {
    /** Account holders of interface C: every call resolves one, and a panel has thousands of members. */
    accountHolders: 10_000,
    /**
     * What the ledger's writer keeps in memory on SQLite (ledger.ts): accounts (and their holders)
     * before it starts again empty, and the answers of recent Idempotency-Keys (a key it no longer
     * holds is read from the store). A few hundred bytes each.
     */
    ledgerAccounts: 100_000,
    ledgerAnswers: 10_000,
  },
} as const
