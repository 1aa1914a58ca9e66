// How fast the CLI starts, as testers run it hundreds of times a script: `medpanel --version` and
// `medpanel list-clients --json` (opens and reads the store) against `node -e 0` on the same Node.
// Rounds alternate between the three; medians are compared. Goals: <= 2x and <= 2.5x.
import {spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {cpus, tmpdir} from 'node:os'
import {join} from 'node:path'
import {BIN} from './lib.mjs'

const rounds = Number(process.env.ROUNDS ?? 15)
const db = join(mkdtempSync(join(tmpdir(), 'medpanel-bench-')), 'start.db')

function time(args) {
  const started = process.hrtime.bigint()
  const result = spawnSync(process.execPath, args, {stdio: ['ignore', 'pipe', 'pipe']})
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return Number(process.hrtime.bigint() - started) / 1e6
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const commands = {
  bare: ['-e', '0'],
  version: [BIN, '--version'],
  list: [BIN, 'list-clients', '--json', '--db', db],
}
// The store, made by a command that writes (one that only reads refuses a missing store), with
// one client to list. Then a warm-up round, so the page cache holds the bundle.
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
for (const args of Object.values(commands)) time(args)
const samples = {bare: [], version: [], list: []}
for (let i = 0; i < rounds; i++) for (const [name, args] of Object.entries(commands)) samples[name].push(time(args))

const bare = median(samples.bare)
console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; median of ${rounds} alternating rounds`)
console.log(`node -e 0:                       ${bare.toFixed(1)} ms`)
console.log(`medpanel --version:              ${median(samples.version).toFixed(1)} ms  ratio ${(median(samples.version) / bare).toFixed(2)}x (goal <= 2x)`)
console.log(`medpanel list-clients --json:    ${median(samples.list).toFixed(1)} ms  ratio ${(median(samples.list) / bare).toFixed(2)}x (goal <= 2.5x)`)
