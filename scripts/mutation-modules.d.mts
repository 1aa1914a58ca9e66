/** Types of mutation-modules.mjs (plain JavaScript, which stryker.config.mjs loads as it is). */
export interface MutationModule {
  /** The mutation score under which a run fails, as documented in docs/architecture.md. */
  break: number
  /** Whole files (or `*` patterns) to mutate. */
  mutate: string[]
  /** Functions to mutate, by file: resolved to their lines when the config loads. */
  functions?: Record<string, string[]>
  /** The in-process test files that guard the module. */
  tests: string[]
}
export const MODULES: Record<string, MutationModule>
export function mutatedParts(root: string, module: MutationModule): string[]
