import type {TestProject} from 'vitest/node'
import {ensureFreshBuild} from './helpers/fresh-build.mjs'

/**
 * The CLI tests run the built dist/, so every vitest run (plain `npx vitest run`, watch mode, or
 * scripts/test.mjs) first rebuilds it when it is older than the sources; watch mode checks again
 * before each rerun. scripts/test.mjs checks once for all its runtimes and sets
 * MEDPANEL_TEST_BUILT=1, which skips the check here.
 */
export default function setup(project: TestProject): void {
  if (process.env.MEDPANEL_TEST_BUILT === '1') return
  ensureFreshBuild()
  project.onTestsRerun(() => {
    ensureFreshBuild()
  })
}
