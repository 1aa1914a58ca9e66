// Shared helpers for the benchmark scripts: start the built CLI, run autocannon, print results.
import autocannon from 'autocannon'
import {spawn, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync, openSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

export const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))

/**
 * Node flags for the measured server: BENCH_PROFILE_DIR=dir writes a CPU profile of it there
 * (the closing notes quote their top entries). Empty otherwise: the server runs as shipped.
 */
export const SERVER_NODE_FLAGS = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []

export function tempDb(name) {
  return join(mkdtempSync(join(tmpdir(), 'medpanel-bench-')), name)
}

/** Runs a CLI command with --json and returns the parsed output. */
export function cliJson(args) {
  const result = spawnSync(process.execPath, [BIN, ...args, '--json'], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']})
  if (result.status !== 0) throw new Error(`medpanel ${args.join(' ')}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/**
 * Starts a long-running command printing one JSON document with `url`; resolves {url, child, stop}.
 * `stderrFile` keeps its stderr (the access log, as an operator would keep it); otherwise dropped.
 */
export function startJsonServer(command, args, {stderrFile} = {}) {
  return new Promise((resolve, reject) => {
    const stderr = stderrFile ? openSync(stderrFile, 'w') : 'ignore'
    const child = spawn(command, args, {stdio: ['ignore', 'pipe', stderr]})
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      try {
        const info = JSON.parse(out)
        resolve({
          url: info.url,
          child,
          stop: () =>
            new Promise((done) => {
              child.once('exit', done)
              child.kill('SIGTERM')
            }),
        })
      } catch {}
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
}

/**
 * The ceiling: a bare node:http server answering a small JSON body, in its own process. With
 * `spinMicros`, it first keeps the CPU busy that long per request (bench/ceiling.mjs: how the
 * ceiling itself falls with work per request).
 */
export function startBareServer(body = '{"ok":true}', {spinMicros = 0} = {}) {
  const source = `
    const http = require('node:http')
    const body = ${JSON.stringify(body)}
    const spin = ${Number(spinMicros)} / 1000
    const work = () => { const until = performance.now() + spin; while (performance.now() < until); }
    const server = http.createServer((req, res) => { if (spin > 0) work(); res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)}); res.end(body) })
    server.keepAliveTimeout = 65000
    server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({url: 'http://127.0.0.1:' + server.address().port})))`
  return startJsonServer(process.execPath, ['-e', source])
}

/** autocannon with the given options; resolves its result. */
export function cannon(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)))
  })
}

/** A refused benchmark flag: one `Error:` line, exit 1, nothing measured. */
export function usageError(message) {
  process.stderr.write(`Error: ${message}\n`)
  process.exit(1)
}

/** A flag's whole-number value, at least `min`; anything else is refused with usageError. */
export function wholeNumber(name, text, min = 1) {
  const value = Number(text)
  if (text === undefined || String(text).trim() === '' || !Number.isInteger(value) || value < min)
    usageError(`--${name} must be a whole number of at least ${min} (got ${JSON.stringify(text)})`)
  return value
}

export function fmt(n, digits = 0) {
  return Number(n).toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})
}

/**
 * The store a benchmark runs on, chosen by --store: a SQLite file (as shipped), or a fresh database
 * on PostgreSQL — BENCH_DATABASE_URL's cluster when set, else a throwaway cluster this process
 * starts (scripts/postgres.sh, Debian's PostgreSQL) and removes on exit. Returns the CLI flags that
 * name it; PostgreSQL runs also get a MEDPANEL_SECRET_KEY for every child.
 */
export function benchStore(kind, name) {
  if (kind === 'sqlite') return {flags: ['--db', tempDb(`${name}.db`)], label: 'SQLite'}
  if (kind !== 'postgres') throw new Error(`--store must be sqlite or postgres (got ${kind})`)
  process.env.MEDPANEL_SECRET_KEY ||= randomBytes(32).toString('base64')
  let base = process.env.BENCH_DATABASE_URL
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), 'medpanel-bench-pg-'))
    const started = spawnSync('bash', [SCRIPTS_POSTGRES, 'start', dir, '55480'], {encoding: 'utf8'})
    if (started.status !== 0) throw new Error(`could not start PostgreSQL: ${started.stderr}`)
    base = started.stdout.trim()
    process.env.BENCH_DATABASE_URL = base
    process.once('exit', () => spawnSync('bash', [SCRIPTS_POSTGRES, 'stop', dir]))
  }
  const database = `bench_${name}_${randomBytes(4).toString('hex')}`
  const created = spawnSync('psql', [base, '-q', '-c', `create database ${database}`], {encoding: 'utf8'})
  if (created.status !== 0) throw new Error(`could not create ${database}: ${created.stderr}`)
  const url = new URL(base)
  url.pathname = `/${database}`
  return {flags: ['--database-url', url.toString()], url: url.toString(), label: 'PostgreSQL'}
}

const SCRIPTS_POSTGRES = fileURLToPath(new URL('../scripts/postgres.sh', import.meta.url))
