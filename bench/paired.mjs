// Two builds of medpanel compared on one benchmark, in paired alternating runs: the benchmark
// script of a baseline checkout (--baseline DIR, built with `npm run build`) and this checkout's
// run one after the other, --pairs times, baseline first then this one, then the other way round,
// so a drift in the machine's load weighs on both alike. Each run already measures its figure
// against the bare node:http ceiling in the same rounds; the comparison is of those ratios (the
// figure over its own run's ceiling), so a run on a busier moment is not held against either side.
// Prints each run's figure and ceiling, then the medians and this build's over the baseline's.
// Usage: npm run build && node bench/paired.mjs --baseline ../main-before --bench signon|balance [--pairs 3] [-- bench flags]
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'
import {fmt, machineLine, median, usageError, wholeNumber} from './lib.mjs'

/** What each benchmark is compared on: its figure's line and its ceiling's line, req/s first on each. */
const FIGURES = {
  signon: {name: 'token info', figure: /^token info {2}\(GET [^)]*\): ([\d,]+) req\/s/m, ceiling: /^bare node:http \(ceiling\): +([\d,]+) req\/s/m},
  balance: {name: 'withdrawals', figure: /^ {2}withdrawals \(POST …\/withdrawals\): ([\d,]+) \/s/m, ceiling: /^bare node:http \(ceiling, same POSTs\): ([\d,]+) \/s/m},
}

let parsed
try {
  parsed = parseArgs({
    options: {baseline: {type: 'string'}, bench: {type: 'string', default: 'signon'}, pairs: {type: 'string', default: '3'}},
    allowPositionals: true,
  })
} catch (error) {
  usageError(error.message)
}
const {values, positionals} = parsed
const figures = FIGURES[values.bench]
if (!figures) usageError(`--bench must be one of ${Object.keys(FIGURES).join(', ')} (got ${JSON.stringify(values.bench)})`)
if (!values.baseline) usageError('--baseline DIR is required: a checkout of the build to compare with, built with `npm run build`')
const pairs = wholeNumber('pairs', values.pairs)
const here = fileURLToPath(new URL('..', import.meta.url))
const sides = [
  {label: 'baseline', dir: values.baseline, ratios: []},
  {label: 'this build', dir: here, ratios: []},
]
for (const side of sides) {
  if (!existsSync(`${side.dir}/bench/${values.bench}.mjs`) || !existsSync(`${side.dir}/dist`)) {
    usageError(`${side.dir} has no bench/${values.bench}.mjs or no dist/: check it out and run \`npm run build\` there`)
  }
}

/** Runs one side's benchmark once and returns its figure, its ceiling and their ratio. */
function runOnce(side) {
  const run = spawnSync(process.execPath, [`bench/${values.bench}.mjs`, ...positionals], {cwd: side.dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']})
  const number = (pattern) => Number(pattern.exec(run.stdout)?.[1]?.replaceAll(',', ''))
  const figure = number(figures.figure)
  const ceiling = number(figures.ceiling)
  if (run.status !== 0 || !(figure > 0) || !(ceiling > 0)) {
    process.stderr.write(run.stdout)
    throw new Error(`${side.label}: bench/${values.bench}.mjs exited ${run.status} without both figures`)
  }
  return {figure, ceiling, ratio: figure / ceiling}
}

console.log(`${machineLine()}; ${pairs} pairs of runs of bench/${values.bench}.mjs ${positionals.join(' ')}`.trimEnd())
for (let pair = 0; pair < pairs; pair++) {
  const order = pair % 2 === 0 ? sides : [...sides].reverse()
  for (const side of order) {
    const {figure, ceiling, ratio} = runOnce(side)
    side.ratios.push(ratio)
    console.log(`pair ${pair + 1}, ${side.label}: ${figures.name} ${fmt(figure)}/s, ceiling ${fmt(ceiling)}/s, ratio ${fmt(ratio, 3)}`)
  }
}
const [before, after] = sides.map((side) => median(side.ratios))
console.log(`${figures.name} / ceiling, median: baseline ${fmt(before, 3)}, this build ${fmt(after, 3)}; this build / baseline ${fmt(after / before, 3)}`)
