// Shared helpers for the benchmark scripts: start the built CLI, run autocannon, print results.
import autocannon from 'autocannon'
import {spawn, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync, openSync, readdirSync, readFileSync} from 'node:fs'
import http from 'node:http'
import {cpus, tmpdir} from 'node:os'
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
 * With BENCH_PROFILE set to a directory, a Node server writes its CPU profile there when it stops.
 */
export function startJsonServer(command, args, {stderrFile} = {}) {
  return new Promise((resolve, reject) => {
    const stderr = stderrFile ? openSync(stderrFile, 'w') : 'ignore'
    // BENCH_PROFILE=DIR: Node writes a CPU profile of each server into DIR as it exits.
    const profile = process.env.BENCH_PROFILE && command === process.execPath ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
    const child = spawn(command, [...profile, ...args], {stdio: ['ignore', 'pipe', stderr]})
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      try {
        const info = JSON.parse(out)
        resolve({
          url: info.url,
          info,
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

/**
 * The framework's floor: Hono on @hono/node-server with one route answering the same body as the
 * ceiling (bench/hono-floor-server.mjs), in its own process. Between the ceiling and medpanel: the
 * ceiling / floor gap is what the framework costs, the floor / medpanel gap medpanel's own work.
 */
export function startFrameworkFloor(body = '{"ok":true}') {
  return startJsonServer(process.execPath, [fileURLToPath(new URL('./hono-floor-server.mjs', import.meta.url)), body])
}

/** autocannon with the given options; resolves its result. */
export function cannon(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)))
  })
}

/**
 * Latency at a fixed offered load, open loop: `rate` requests a second leave on an even schedule
 * whether or not earlier ones were answered (as a gateway's callers arrive), on keep-alive
 * connections, as many as are in flight. Each is timed from the moment it was written to its
 * answer's end. A closed loop (autocannon's N connections, each waiting for its answer) cannot
 * show this: its mean latency is N / throughput by Little's law, whatever the server does.
 * Resolves the 50th and 99th percentiles and the largest, in ms; how many were sent, how many
 * failed (not 200, or a socket error), and the rate achieved.
 */
export async function pacedLatency({url, method = 'GET', headers = {}, body, rate, duration}) {
  const agent = new http.Agent({keepAlive: true, maxSockets: 512})
  const target = new URL(url)
  const total = Math.round(rate * duration)
  const latencies = new Float64Array(total)
  const sendHeaders = body === undefined ? headers : {...headers, 'content-length': Buffer.byteLength(body)}
  let failed = 0
  const send = (i) =>
    new Promise((resolve) => {
      const sent = performance.now()
      const done = (ok) => {
        latencies[i] = performance.now() - sent
        if (!ok) failed++
        resolve()
      }
      const request = http.request({agent, host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers: sendHeaders}, (response) => {
        response.resume()
        response.on('end', () => done(response.statusCode === 200))
      })
      request.on('error', () => done(false))
      request.end(body)
    })
  const pending = []
  const start = performance.now()
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now()
    if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(send(i))
  }
  await Promise.all(pending)
  const elapsed = (performance.now() - start) / 1000
  agent.destroy()
  const sorted = latencies.sort()
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return {p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1], sent: total, failed, rate: total / elapsed}
}

/**
 * pacedLatency at `rate` for each named side ({url, method, headers, body}) in alternating rounds
 * of `duration` seconds: the median p99 of each, in ms. Failed answers are added to side.errors.
 */
export async function pacedP99s(sides, names, {rate, rounds = 3, duration = 3}) {
  const p99s = Object.fromEntries(names.map((name) => [name, []]))
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 ? [...names].reverse() : names) {
      const side = sides[name]
      const r = await pacedLatency({url: side.url, method: side.method, headers: side.headers, body: side.body, rate, duration})
      p99s[name].push(r.p99)
      side.errors = (side.errors ?? 0) + r.failed
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(p99s[name])]))
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
 * starts in scripts/postgres.sh's durable mode (every commit flushed, as SQLite's synchronous=FULL
 * does; on BENCH_PG_PORT, by default a free port) and removes on exit. Returns the CLI flags that name it;
 * PostgreSQL runs also get a MEDPANEL_SECRET_KEY for every child.
 */
export function benchStore(kind, name, {synchronousCommit} = {}) {
  if (kind === 'sqlite') return {flags: ['--db', tempDb(`${name}.db`)], label: 'SQLite'}
  if (kind !== 'postgres') usageError(`--store must be sqlite or postgres (got ${JSON.stringify(kind)})`)
  process.env.MEDPANEL_SECRET_KEY ||= randomBytes(32).toString('base64')
  let base = process.env.BENCH_DATABASE_URL
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), 'medpanel-bench-pg-'))
    const port = process.env.BENCH_PG_PORT || 'free'
    const started = spawnSync('bash', [SCRIPTS_POSTGRES, 'start', dir, port, 'durable'], {encoding: 'utf8'})
    if (started.status !== 0) throw new Error(`could not start PostgreSQL: ${started.stderr}`)
    base = started.stdout.trim()
    process.env.BENCH_DATABASE_URL = base
    process.once('exit', () => spawnSync('bash', [SCRIPTS_POSTGRES, 'stop', dir]))
  }
  const database = `bench_${name}_${randomBytes(4).toString('hex')}`
  // psql (libpq) takes a URL of several hosts with target_session_attrs itself.
  const setting = synchronousCommit ? ['-c', `alter database ${database} set synchronous_commit = ${synchronousCommit}`] : []
  const created = spawnSync('psql', [base, '-q', '-c', `create database ${database}`, ...setting], {encoding: 'utf8'})
  if (created.status !== 0) throw new Error(`could not create ${database}: ${created.stderr}`)
  // The path replaced by hand: a URL of several hosts (h1:5432,h2:5433) is no WHATWG URL.
  const [, authority, query] = /^(postgres(?:ql)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(base)
  const url = `${authority}/${database}${query ?? ''}`
  return {flags: ['--database-url', url], url, database, label: 'PostgreSQL'}
}

/** The one server of a URL that may name several: the one libpq picks for it (target_session_attrs). */
function oneServerOf(url) {
  if (!/^postgres(?:ql)?:\/\/[^/?]*,/.test(url)) return url
  const asked = spawnSync('psql', [url, '-Atc', "select host(inet_server_addr()) || ':' || inet_server_port()"], {encoding: 'utf8'})
  if (asked.status !== 0) throw new Error(`could not reach ${url}: ${asked.stderr}`)
  return url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/]*@)?)[^/?]*/, `$1${asked.stdout.trim()}`).replace(/[?&]target_session_attrs=[^&]*/, '')
}

const SCRIPTS_POSTGRES = fileURLToPath(new URL('../scripts/postgres.sh', import.meta.url))

/** The median of a list of numbers (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** The machine a run measured: cores, CPU model, Node (and PostgreSQL when given). */
export function machineLine(postgres) {
  const pg = postgres ? `; ${postgres.version}, ${postgres.durability}` : ''
  return `machine: ${cpus().length} cores, ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}${pg}`
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], {encoding: 'utf8'}).stdout.trim()) || 100

/** Fields of /proc/PID/stat after the command name (field 3 onwards), or undefined once it is gone. */
function procStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/**
 * CPU seconds the processes have used so far (user + system, /proc/PID/stat). With
 * `children`, what their children that exited and were waited for used too (cutime + cstime).
 */
export function cpuSeconds(pids, {children = false} = {}) {
  let ticks = 0
  for (const pid of pids) {
    const f = procStat(pid)
    if (!f) continue
    // f[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
    ticks += Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)
  }
  return ticks / CLOCK_TICKS
}

/** Direct children of a process, from /proc (field 4 of each stat is the parent). */
function childrenOf(parent) {
  const out = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const f = procStat(entry)
    if (f && Number(f[1]) === parent) out.push(Number(entry))
  }
  return out
}

/**
 * What a benchmark needs to know of a PostgreSQL cluster: its version, its durability settings,
 * and (when it runs on this machine and its data directory is readable) the CPU its processes
 * have used: the postmaster, every live backend and helper, and those that already exited.
 * Also reads the WAL's flush statistics (pg_stat_wal) and samples how many sessions hold a
 * transaction id — a row lock or a write — for Little's law (see sampleWriters).
 */
export async function postgresProbe(url) {
  const {default: pg} = await import('pg')
  const client = new pg.Client({connectionString: oneServerOf(url)})
  await client.connect()
  const one = async (text, params) => (await client.query(text, params)).rows[0]
  const version = `PostgreSQL ${(await one('show server_version')).server_version.split(' ')[0]}`
  const settings = {}
  for (const name of ['fsync', 'synchronous_commit', 'full_page_writes']) settings[name] = (await one(`show ${name}`))[name]
  const durable = settings.fsync === 'on' && settings.synchronous_commit === 'on' && settings.full_page_writes === 'on'
  const durability = durable
    ? 'durable (fsync, synchronous_commit, full_page_writes on)'
    : `NOT durable (${Object.entries(settings)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')})`
  let postmaster
  try {
    const dataDir = (await one('show data_directory')).data_directory
    postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    if (!procStat(postmaster)) postmaster = undefined
  } catch {
    postmaster = undefined // not this machine's, or not readable: CPU is not measured
  }
  const timing = (await one("select setting from pg_settings where name = 'track_wal_io_timing'"))?.setting === 'on'
  // Statement times, where the cluster preloads pg_stat_statements (scripts/postgres.sh durable).
  let statements = false
  try {
    await client.query('create extension if not exists pg_stat_statements')
    await client.query('select 1 from pg_stat_statements limit 1')
    statements = true
  } catch {
    statements = false
  }
  // Standbys streaming from the server, and whether a commit waits for them (sync, quorum).
  const {rows: standbys} = await client.query('select application_name, sync_state from pg_stat_replication order by 1')
  return {
    version,
    durability,
    standbys: standbys.length === 0 ? undefined : standbys.map((row) => `${row.application_name} (${row.sync_state})`).join(', '),
    /** CPU seconds of the whole cluster so far, or undefined when it cannot be read here. */
    cpu: () => (postmaster ? cpuSeconds([postmaster], {children: true}) + cpuSeconds(childrenOf(postmaster)) : undefined),
    /** WAL flushes so far and the milliseconds spent in them (undefined without track_wal_io_timing). */
    wal: async () => {
      const row = await one('select wal_sync, wal_sync_time from pg_stat_wal')
      return {syncs: Number(row.wal_sync), ms: timing ? Number(row.wal_sync_time) : undefined}
    },
    /**
     * Calls and milliseconds so far of `database`'s statements whose text matches `pattern` (a
     * SQL regular expression), from pg_stat_statements; undefined where it is not loaded.
     */
    statements: async (database, pattern) => {
      if (!statements) return undefined
      const row = await one(
        'select coalesce(sum(calls), 0)::float8 as calls, coalesce(sum(total_exec_time), 0)::float8 as ms from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = $1 and s.query ~* $2',
        [database, pattern],
      )
      return {calls: row.calls, ms: row.ms}
    },
    /**
     * Samples, every `everyMs` until the returned stop() is called, how many sessions of
     * `database` hold a transaction id (a SELECT … FOR UPDATE or a write took one; reads never
     * do). stop() resolves the mean count: by Little's law, that mean over the number of such
     * transactions per second is how long each holds its locks.
     */
    sampleWriters: (database, everyMs = 10) => {
      let samples = 0
      let sum = 0
      let running = true
      const loop = (async () => {
        while (running) {
          const row = await one("select count(*)::int as n from pg_stat_activity where datname = $1 and backend_xid is not null and backend_type = 'client backend'", [database])
          sum += row.n
          samples += 1
          await new Promise((resolve) => setTimeout(resolve, everyMs))
        }
      })()
      return async () => {
        running = false
        await loop
        return samples ? sum / samples : 0
      }
    },
    close: () => client.end(),
  }
}

/**
 * Measures CPU around one round: call before it, and call what it returns after it with the
 * requests the round answered; adds ms of CPU per request to `into` ({serve: [], postgres: []}).
 */
export function cpuRound(servePids, probe, into) {
  const serve0 = cpuSeconds(servePids)
  const pg0 = probe?.cpu()
  return (requests) => {
    if (requests <= 0) return
    into.serve.push(((cpuSeconds(servePids) - serve0) * 1000) / requests)
    const pg1 = probe?.cpu()
    if (pg0 !== undefined && pg1 !== undefined) into.postgres.push(((pg1 - pg0) * 1000) / requests)
  }
}
