// How fast the CLI starts, as testers run it hundreds of times a script: `medpanel --version` and
// `medpanel list-clients --json` (opens and reads the store) against `node -e 0` on the same Node.
// Rounds alternate between the commands; medians are compared. Goals: --version <= 1.5x and
// list-clients --json <= 2x `node -e 0`.
//
// The CLI runs as shipped, with V8's code cache (src/cli/code-cache.ts) in a cache directory of
// this run, which the warm-up round fills. The same rounds also time list-clients with the cache
// turned off (NODE_DISABLE_COMPILE_CACHE=1), the start a first run, or a new build, pays.
import {spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {cpus, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import {BIN} from './lib.mjs'

const rounds = Number(process.env.ROUNDS ?? 15)
const dir = mkdtempSync(join(tmpdir(), 'medpanel-bench-'))
const db = join(dir, 'start.db')
const cacheEnv = {...process.env, MEDPANEL_CACHE_DIR: join(dir, 'cache')}
delete cacheEnv.NODE_DISABLE_COMPILE_CACHE

function time(args, env = cacheEnv) {
  const started = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, {stdio: ['ignore', 'pipe', 'pipe'], env})
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return Number(process.hrtime.bigint() - started) / 1e6
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')

const list = [BIN, 'list-clients', '--json', '--db', db]
const commands = {
  bare: {args: ['-e', '0']},
  version: {args: [BIN, '--version']},
  list: {args: list},
  uncached: {args: list, env: {...cacheEnv, NODE_DISABLE_COMPILE_CACHE: '1'}},
}
// The store, made by a command that writes (one that only reads refuses a missing store), with
// one client to list. Then a warm-up round, so the page cache holds the bundle and the code cache
// holds what each command compiles.
time([
  BIN,
  'register-client',
  '--db',
  db,
  '--name',
  'Bench',
  '--url',
  'https://bench.example',
  '--logo-url',
  'https://bench.example/l.png',
  '--redirect-uri',
  'https://bench.example/cb',
  '--json',
])
const loadBefore = load()
for (const {args, env} of Object.values(commands)) time(args, env)
const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]))
for (let i = 0; i < rounds; i++) for (const [name, {args, env}] of Object.entries(commands)) samples[name].push(time(args, env))

const bare = median(samples.bare)
const line = (label, name, goal) => {
  const ms = median(samples[name])
  const ratio = ms / bare
  const verdict = goal === undefined ? '' : ` (goal <= ${goal}x: ${ratio <= goal ? 'MET' : 'NOT MET'})`
  console.log(`${label.padEnd(42)} ${ms.toFixed(1).padStart(7)} ms  ratio ${ratio.toFixed(2)}x${verdict}`)
}
console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; median of ${rounds} alternating rounds`)
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${load()} after`)
console.log(`${'node -e 0'.padEnd(42)} ${bare.toFixed(1).padStart(7)} ms`)
line('medpanel --version', 'version', 1.5)
line('medpanel list-clients --json', 'list', 2)
line('medpanel list-clients --json, no code cache', 'uncached')
