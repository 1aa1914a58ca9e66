/** Types of test-lists.mjs (plain JavaScript, so that scripts/test.mjs can read it without a loader). */
export const ISOLATED: string[]
export const SQLITE_FILE_TESTS: string[]
export const RUNTIME_TESTS: string[]
export const NOT_ON_POSTGRES: string[]
export const STARTS_PROCESSES: string[]
