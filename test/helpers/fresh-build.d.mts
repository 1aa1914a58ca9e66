/** Types of fresh-build.mjs (plain JavaScript, so that scripts/test.mjs can run it without a loader). */
export function changedSince(time: number, extra?: string[]): string | undefined
export function staleReason(): string | undefined
export function ensureFreshBuild(options?: {force?: boolean; log?: (line: string) => void}): {built: boolean; reason?: string}
