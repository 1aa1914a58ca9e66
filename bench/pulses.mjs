// Benchmark for interface D: export one pulse of 10,000 respondents × 20 questions through
// `medpanel serve`, and, in the same run, the same bytes served from memory by a bare node:http
// server (the ceiling). Prints time, bytes, the serving process's peak RSS, and the ratios.
//
//   npm run build && node bench/pulses.mjs [--respondents 10000] [--runs 7]
//
// Both servers run as child processes on 127.0.0.1 and are read by the same node:http client, so
// the only difference is what produces the bytes. Peak RSS is VmHWM from /proc/<pid>/status.
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {request} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const args = process.argv.slice(2)
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const RESPONDENTS = flag('respondents', 10_000)
const RUNS = flag('runs', 7)
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'medpanel-bench-pulses-'))
const dbArgs = ['--db', join(dir, 'bench.db')]

function cliJson(cliArgs) {
  const result = spawnSync(process.execPath, [BIN, ...cliArgs, ...dbArgs, '--json'], {encoding: 'utf8', maxBuffer: 64 << 20})
  if (result.status !== 0) throw new Error(`medpanel ${cliArgs[0]} failed: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** Starts a child that prints one JSON line with `url` once listening. */
function startServer(command, commandArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.stdout.on('data', (d) => {
      out += d
      try {
        resolve({child, url: JSON.parse(out).url})
      } catch {
        // not a whole document yet
      }
    })
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)))
  })
}

function stop(child) {
  return new Promise((resolve) => {
    // A child killed by a signal has exitCode null but signalCode set; waiting for its exit again would hang.
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.removeAllListeners('exit')
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return {peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024}
}

/** GETs a URL and drains the body; resolves with milliseconds, byte count and (optionally) the bytes. */
function fetchAll(url, headers = {}, keep = false) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request(url, {headers, agent: false}, (res) => {
      let bytes = 0
      const parts = []
      res.on('data', (chunk) => {
        bytes += chunk.length
        if (keep) parts.push(chunk)
      })
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}: ${Buffer.concat(parts).toString().slice(0, 200)}`))
        resolve({ms: performance.now() - started, bytes, body: keep ? Buffer.concat(parts) : undefined})
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const mb = (n) => `${n.toFixed(1)} MB`

const children = []
try {
  const client = cliJson(['register-client', '--name', 'Bench Pulses', '--url', 'https://bench.example', '--logo-url', 'https://bench.example/l.png', '--grant', 'pulses'])
  const started = performance.now()
  const seeded = cliJson(['seed-pulses', '--client', client.client_id, '--count', '1', '--respondents', String(RESPONDENTS), '--seed', 'bench'])
  const pulse = seeded.created[0]
  console.log(`seeded 1 pulse: ${pulse.respondents} respondents x ${pulse.questions} questions in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  const served = await startServer(process.execPath, [BIN, 'serve', '--port', '0', '--no-worker', ...dbArgs, '--json'])
  children.push(served.child)
  const idle = memoryOf(served.child.pid)
  const tokenBody = new URLSearchParams({grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret}).toString()
  const token = await fetch(`${served.url}/oauth/token`, {method: 'POST', headers: {'content-type': 'application/x-www-form-urlencoded'}, body: tokenBody}).then((r) => r.json())
  const auth = {Authorization: `Bearer ${token.access_token}`}
  const exportUrl = `${served.url}/projects/${pulse.project_id}/export`

  // First request: keep the bytes (they feed the ceiling) and check they are the whole document.
  const first = await fetchAll(exportUrl, auth, true)
  const doc = JSON.parse(first.body.toString('utf8'))
  if (doc.Respondents.length !== RESPONDENTS) throw new Error(`export has ${doc.Respondents.length} respondents`)
  const times = []
  for (let i = 0; i < RUNS; i++) times.push((await fetchAll(exportUrl, auth)).ms)
  const memory = memoryOf(served.child.pid)
  await stop(served.child)

  const bytesFile = join(dir, 'export.json')
  writeFileSync(bytesFile, first.body)
  const bareSource = `
    const http = require('node:http')
    const body = require('node:fs').readFileSync(${JSON.stringify(bytesFile)})
    const server = http.createServer((req, res) => {
      res.writeHead(200, {'content-type': 'application/json; charset=utf-8', 'content-length': body.length})
      res.end(body)
    })
    server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({url: 'http://127.0.0.1:' + server.address().port})))
  `
  const bare = await startServer(process.execPath, ['-e', bareSource])
  children.push(bare.child)
  await fetchAll(bare.url)
  const bareTimes = []
  for (let i = 0; i < RUNS; i++) bareTimes.push((await fetchAll(bare.url)).ms)
  const bareMemory = memoryOf(bare.child.pid)
  await stop(bare.child)

  const ours = median(times)
  const ceiling = median(bareTimes)
  const ratio = ours / ceiling
  console.log(`export bytes: ${first.bytes} (${mb(first.bytes / 1048576)}), ${RUNS} runs after a first one (${first.ms.toFixed(1)} ms)`)
  console.log(`medpanel serve export: median ${ours.toFixed(1)} ms  [${times.map((t) => t.toFixed(0)).join(', ')}]`)
  console.log(`ceiling, bare node:http from memory: median ${ceiling.toFixed(1)} ms  [${bareTimes.map((t) => t.toFixed(0)).join(', ')}]`)
  console.log(`serve process RSS: ${mb(idle.now)} idle before exports, peak (VmHWM) ${mb(memory.peak)}; bare server peak ${mb(bareMemory.peak)}`)
  console.log(
    `time ratio: ${ratio.toFixed(2)}x the ceiling (goal <= 3x: ${ratio <= 3 ? 'met' : 'NOT met'}); peak RSS ${mb(memory.peak)} (goal < 150 MB: ${memory.peak < 150 ? 'met' : 'NOT met'})`,
  )
} finally {
  for (const child of children) await stop(child)
  rmSync(dir, {recursive: true, force: true})
}
