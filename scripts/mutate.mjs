// `npm run mutate [module…]`: StrykerJS on each module of stryker.config.mjs in turn (all of them
// when none is named), then one line per module with its mutation score. Not part of `npm test`:
// a module takes minutes to an hour on two cores. Reports: reports/mutation/<module>.html.
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'

import {fileURLToPath} from 'node:url'
import {MODULES, mutatedParts} from './mutation-modules.mjs'

// Set beforehand, MEDPANEL_MUTATE_TESTS narrows every module's run to those test files.
const chosenTests = process.env.MEDPANEL_MUTATE_TESTS ?? ''
const root = fileURLToPath(new URL('..', import.meta.url))

// Module names first; the first option and all after it go to Stryker, as in
// `npm run mutate -- balance --mutate src/interfaces/balance/service.ts:451-525`.
const args = process.argv.slice(2)
const split = args.findIndex((arg) => arg.startsWith('-'))
const names = split === -1 ? args : args.slice(0, split)
const extra = split === -1 ? [] : args.slice(split)
for (const name of names) {
  if (!(name in MODULES)) {
    console.error(`unknown module "${name}": one of ${Object.keys(MODULES).join(', ')}`)
    process.exit(2)
  }
}
const chosen = names.length > 0 ? names : Object.keys(MODULES)
const stryker = new URL('../node_modules/@stryker-mutator/core/bin/stryker.js', import.meta.url).pathname
let failed = false
for (const name of chosen) {
  console.log(`\n== mutating ${name} (fails under ${MODULES[name].break}%): ${mutatedParts(root, MODULES[name]).join(', ')}`)
  const run = spawnSync(process.execPath, [stryker, 'run', 'stryker.config.mjs', ...extra], {
    stdio: 'inherit',
    env: {...process.env, MEDPANEL_MUTATE_MODULE: name, MEDPANEL_MUTATE_TESTS: chosenTests},
  })
  if (run.status !== 0) failed = true
}

/** Killed and timed-out mutants over all that could be tested (no coverage counts as survived). */
function score(report) {
  const counts = {}
  for (const file of Object.values(report.files)) for (const m of file.mutants) counts[m.status] = (counts[m.status] ?? 0) + 1
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0)
  const undetected = (counts.Survived ?? 0) + (counts.NoCoverage ?? 0)
  const covered = detected + (counts.Survived ?? 0)
  return {
    score: (100 * detected) / (detected + undetected),
    covered: (100 * detected) / covered,
    counts,
  }
}

console.log('\nmodule      score  covered  killed timeout survived no-coverage')
for (const name of chosen) {
  const file = `reports/mutation/${name}.json`
  if (!existsSync(file)) {
    console.log(`${name.padEnd(10)}  (no report)`)
    continue
  }
  const {score: total, covered, counts} = score(JSON.parse(readFileSync(file, 'utf8')))
  const cells = [total, covered].map((n) => `${n.toFixed(1)}%`.padStart(6))
  const numbers = [counts.Killed, counts.Timeout, counts.Survived, counts.NoCoverage].map((n) => String(n ?? 0).padStart(7))
  console.log(`${name.padEnd(10)} ${cells.join('  ')} ${numbers.join(' ')}`)
}
process.exit(failed ? 1 : 0)
