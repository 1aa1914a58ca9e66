/*
 * One page of a list paged in SQL, as the operator commands ask for it: a store may hold tens of
 * thousands of rows, and a command must not read them all to print a hundred. Each owner of a
 * table pages its own rows (the registry's members, interface E's API keys, B's projects, …).
 */

export interface Page<T> {
  rows: T[]
  /** Rows matching the filter, on every page. */
  total: number
}

export interface PageAsk {
  limit: number
  offset: number
}
