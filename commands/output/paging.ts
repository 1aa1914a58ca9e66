import * as Flags from '@oclif/core/flags'

/**
 * Paging shared by the list-* commands: a store can hold tens of thousands of rows, and a list
 * that prints them all by default buries the terminal and a script's memory alike. Every list
 * shows at most --limit rows (100 unless told) from --offset on, and says on stderr how many more
 * there are and the flag that shows them, so stdout stays the table or the one JSON document.
 */
export const DEFAULT_LIMIT = 100

export function pagingFlags(what: string) {
  return {
    limit: Flags.integer({description: `show at most this many ${what}`, default: DEFAULT_LIMIT, min: 1, max: 100_000}),
    offset: Flags.integer({description: `skip this many ${what} first (the next page starts at offset + limit)`, default: 0, min: 0}),
  }
}

export interface Paging {
  limit: number
  offset: number
}

/** One page of `all`, in memory: for lists whose rows are read whole anyway (a running balance). */
export function pageOf<T>(all: T[], paging: Paging): {rows: T[]; total: number} {
  return {rows: all.slice(paging.offset, paging.offset + paging.limit), total: all.length}
}

/**
 * The stderr line about rows left out: how many more lie past this page, and the command line
 * flag that shows the next ones. Nothing when the page holds the rest.
 */
export function moreLine(what: string, paging: Paging, shown: number, total: number): string | undefined {
  const after = total - paging.offset - shown
  if (after <= 0) return undefined
  return `${after} more ${what} not shown (${total} in all); see the next with --offset ${paging.offset + shown}${paging.limit < 1000 ? `, or raise --limit` : ''}`
}

export function sayMore(what: string, paging: Paging, shown: number, total: number): void {
  const line = moreLine(what, paging, shown, total)
  if (line) process.stderr.write(`${line}\n`)
}

/** Parses `--since`: a date (2026-01-31) or an ISO 8601 instant, as the ISO text stored columns compare with. */
export function sinceFlag(what: string) {
  return instantFlag('since', `only ${what} from this date or instant on (2026-01-31 or 2026-01-31T12:00:00Z)`)
}

/** Parses `--until`, the end `--since` pairs with: rows before it (a date alone is its midnight, UTC). */
export function untilFlag(what: string) {
  return instantFlag('until', `only ${what} before this date or instant (2026-02-01 or 2026-01-31T18:00:00Z; a date alone is its first instant, UTC)`)
}

/** A date or an ISO 8601 instant, as the ISO text stored columns compare with; anything else is one error naming the flag. */
function instantFlag(name: string, description: string) {
  return Flags.string({
    description,
    parse: async (input: string) => {
      const text = /^\d{4}-\d{2}-\d{2}$/.test(input) ? `${input}T00:00:00Z` : input
      const at = new Date(text)
      if (!/^\d{4}-\d{2}-\d{2}(T|$)/.test(input) || Number.isNaN(at.getTime()))
        throw new Error(`--${name} must be a date such as 2026-01-31 or an ISO 8601 instant, got "${input}"`)
      return at.toISOString()
    },
  })
}
