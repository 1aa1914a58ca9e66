#!/usr/bin/env node
// Interface E benchmark: a 3-term summary over one year of a 200,000-post, ~1,000,000-comment
// store, timed three ways on the same file:
//   http  — GET /conversations/summary against `medpanel serve` (what a caller sees),
//   shell — the very statements the service runs, in Debian's sqlite3 shell (the ceiling),
//   like  — the same counts by LIKE scans over the window (what FTS5 saves us from).
// Prints all three and the ratios, and the floor: an empty call (/healthz) by the same client
// under the same conditions, which every HTTP figure includes and the shell's does not; and an empty
// E call (a summary of a term that occurs nowhere over one second before any post): the summary
// less the empty call against the shell's statements (goal <= 1.5x), and the empty call against an
// empty token-info call on the same serve, back to back, alternating (goal <= 2x). With --postgres, the same posts are seeded into a PostgreSQL
// database too (a throwaway durable cluster, or BENCH_DATABASE_URL's), served by a second `serve`,
// and timed in the same rounds as the SQLite one: PostgreSQL against SQLite, counts compared.
// Then the memory of a whole-store data answer: a second store
// of --rss-posts posts (4 comments each) over one year, and `serve`'s peak RSS (VmHWM) while it
// streams the data answer for `a` over that year, in XML and in JSON. Usage:
//   node bench/conversations.mjs [--posts 200000] [--comments 5] [--runs 15] [--terms a,b,c] [--keep] [--store FILE] [--postgres] [--pg-store URL] [--rss-posts 50000; 0 skips the memory part] [--empty-pairs 60] [--baseline DIR]
// --pg-store URL times against a PostgreSQL database an earlier --postgres run seeded (it prints
// the URL; keep the cluster with BENCH_DATABASE_URL, and the same MEDPANEL_SECRET_KEY), since
// seeding 200,000 posts there takes far longer than the timing.
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {tsImport} from 'tsx/esm/api'
import {benchStore, machineLine, postgresProbe, usageError, wholeNumber} from './lib.mjs'

const arg = (name, fallback, min = 1) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? wholeNumber(name, process.argv[i + 1], min) : fallback
}
const POSTS = arg('posts', 200_000)
const COMMENTS = arg('comments', 5)
const RUNS = arg('runs', 15)
const KEEP = process.argv.includes('--keep')
const RSS_POSTS = arg('rss-posts', 50_000, 0)
const pgStoreAt = process.argv.indexOf('--pg-store')
const PG_STORE = pgStoreAt > 0 ? process.argv[pgStoreAt + 1] : undefined
if (pgStoreAt > 0 && !/^postgres(ql)?:\/\//.test(PG_STORE ?? '')) usageError(`--pg-store takes a postgres:// URL (got ${JSON.stringify(PG_STORE ?? '')})`)
const POSTGRES = process.argv.includes('--postgres') || PG_STORE !== undefined
/** The posts and comments of the kept PostgreSQL database, read before anything is seeded: a URL that does not reach one is refused at once. */
const pgKept = PG_STORE === undefined ? undefined : keptPostgresRows(PG_STORE)
function keptPostgresRows(url) {
  const counted = spawnSync('psql', [url, '-Atc', 'select (select count(*) from conversation_posts), (select count(*) from conversation_comments)'], {encoding: 'utf8'})
  if (counted.status !== 0)
    usageError(`--pg-store: no medpanel store with conversations answers at ${url}: ${(counted.stderr || counted.error?.message || '').trim().split('\n')[0]}`)
  const [posts, comments] = counted.stdout.trim().split('|').map(Number)
  return {posts, comments}
}
// --store FILE: time against a store kept by an earlier --keep run instead of seeding a new one
const storeAt = process.argv.indexOf('--store')
const STORE = storeAt > 0 ? process.argv[storeAt + 1] : undefined
if (storeAt > 0 && !(STORE && existsSync(STORE))) usageError(`--store names no file: ${JSON.stringify(STORE ?? '')} (keep one with --keep first)`)
const termsAt = process.argv.indexOf('--terms')
const TERMS = termsAt > 0 ? process.argv[termsAt + 1].split(',').map((t) => t.trim()) : ['metformin', 'atrial fibrillation', 'chest pain']
if (TERMS.some((t) => !/^[a-z0-9 ]+$/i.test(t))) usageError('--terms: letters, digits and spaces only (the shell and LIKE statements embed them)')
const START = '2024-01-01T00:00:00Z'
// The empty call's term and window (see emptyCall below); the pairs of empty calls timed.
const EMPTY_TERM = 'zzqxjv'
const EMPTY_AT = '2000-01-01T00:00:00Z'
const EMPTY_PAIRS = arg('empty-pairs', 60)
// --baseline DIR: another checkout of medpanel, built, whose serve on the same store times the
// same empty-call pairs in the same rounds, alternating with this build's.
const baselineAt = process.argv.indexOf('--baseline')
const BASELINE = baselineAt > 0 ? join(process.argv[baselineAt + 1] ?? '', 'bin/run.js') : undefined
if (BASELINE && !existsSync(BASELINE)) usageError(`--baseline names no checkout with bin/run.js: ${JSON.stringify(process.argv[baselineAt + 1] ?? '')}`)
const END = '2024-12-31T23:59:59Z'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = join(root, 'bin/run.js')
const dir = STORE ? undefined : mkdtempSync(join(tmpdir(), 'medpanel-bench-conv-'))
const db = STORE ?? join(dir, 'bench.db')
const log = (line) => process.stderr.write(`${line}\n`)
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** Runs a CLI command with --json on a store file, or on the store `flags` name (an array). */
function medpanel(args, file = db) {
  const where = Array.isArray(file) ? file : ['--db', file]
  const result = spawnSync(process.execPath, [bin, ...args, ...where, '--json'], {encoding: 'utf8', maxBuffer: 1 << 26})
  if (result.status !== 0) throw new Error(`medpanel ${args[0]} failed: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/**
 * Runs statements in the sqlite3 shell with .timer on; returns output rows and per-statement
 * times: `times` the wall time (the shell prints it rounded to the millisecond), `cpu` user plus
 * system time (printed to the microsecond), which is what a warm, CPU-bound statement takes.
 */
function shell(statements) {
  const script = ['.timer on', ...statements.map((s) => s.trim().replace(/;?$/, ';'))].join('\n')
  const result = spawnSync('sqlite3', ['-bail', db], {input: script, encoding: 'utf8', maxBuffer: 1 << 26})
  if (result.status !== 0) throw new Error(`sqlite3 failed: ${result.stderr}`)
  const times = []
  const cpu = []
  const blocks = [[]]
  for (const line of result.stdout.split('\n')) {
    const time = /^Run Time: real ([0-9.]+) user ([0-9.]+) sys ([0-9.]+)/.exec(line)
    if (time) {
      times.push(Number(time[1]) * 1000)
      cpu.push((Number(time[2]) + Number(time[3])) * 1000)
      blocks.push([])
    } else if (line.trim()) blocks.at(-1).push(line)
  }
  return {times, cpu, blocks}
}

/** Posts and comments already in a kept store. */
function countRows() {
  const [posts, comments] = shell(['select (select count(*) from conversation_posts), (select count(*) from conversation_comments)']).blocks[0][0].split('|').map(Number)
  return {posts, comments}
}

/** Starts `serve` on a store file (or the store `flags` name); resolves its child process and URL. */
async function serve(file, runner = bin) {
  const where = Array.isArray(file) ? file : ['--db', file]
  // BENCH_PROFILE=DIR: the serve writes its CPU profile into DIR when it stops.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []
  const child = spawn(process.execPath, [...profile, runner, 'serve', ...where, '--port', '0', '--json', '--no-worker'], {stdio: ['ignore', 'pipe', 'ignore']})
  const url = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      try {
        resolve(JSON.parse(out).url)
      } catch {}
    })
    child.once('exit', (code) => reject(new Error(`serve exited ${code}`)))
  })
  return {child, url}
}

/** A process's resident memory now and at its peak, in MB (Linux /proc). */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1])
  return {rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024}
}

/**
 * The data answer for `a` over a whole one-year store, streamed from `serve` in XML and in JSON,
 * with the server's peak RSS. Goal: under 250 MB whatever the answer's size.
 */
async function wholeStoreAnswer() {
  // Beside the main store, or (timing a kept store) in a directory of its own, removed afterwards.
  const own = dir ? undefined : mkdtempSync(join(tmpdir(), 'medpanel-bench-conv-'))
  const file = join(dir ?? own, 'rss.db')
  const from = '2025-01-01T00:00:00Z'
  const to = '2025-12-31T23:59:59Z'
  log(`seeding ${RSS_POSTS} posts with ~4 comments each over one year into ${file} …`)
  medpanel(['seed-posts', '--count', String(RSS_POSTS), '--comments', '4', '--from', from, '--to', to, '--seed', '11'], file)
  const client = medpanel(['register-client', '--name', 'Bench', '--url', 'https://bench.example', '--logo-url', 'https://bench.example/l.png', '--grant', 'conversations'], file)
  const {api_key: key} = medpanel(['issue-api-key', client.client_id, '--methods', 'summary,data', '--data-calls', '10'], file)
  const {child, url} = await serve(file)
  try {
    const before = memory(child.pid)
    const lines = []
    for (const [format, accept] of [
      ['XML', 'application/vnd.service-v1+xml'],
      ['JSON', 'application/vnd.service-v1+json'],
    ]) {
      const t0 = performance.now()
      const res = await fetch(`${url}/conversations/data?terms%5B%5D=a&start=${from}&end=${to}`, {headers: {Accept: accept, 'X-Service-Conversation-API-Key': key}})
      if (res.status !== 200) throw new Error(`data answered ${res.status}: ${await res.text()}`)
      let bytes = 0
      for await (const chunk of res.body) bytes += chunk.length
      const after = memory(child.pid)
      lines.push(`  ${format.padEnd(4)} ${(bytes / 1e6).toFixed(1)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s; serve peak RSS so far ${after.peak.toFixed(0)} MB`)
    }
    const peak = memory(child.pid).peak
    console.log(`whole-store data answer: ${RSS_POSTS} posts over ${from} .. ${to}, terms[]=a; serve RSS ${before.rss.toFixed(0)} MB before`)
    for (const line of lines) console.log(line)
    console.log(`  peak RSS ${peak.toFixed(0)} MB (goal < 250 MB: ${peak < 250 ? 'met' : 'missed'})`)
    if (peak >= 250) process.exitCode = 1
  } finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
    if (own) rmSync(own, {recursive: true, force: true})
  }
}

let server
let pgServer
let baselineServer
try {
  if (!existsSync(join(root, 'dist/cli.js'))) spawnSync('npm', ['run', 'build'], {cwd: root, stdio: 'inherit'})
  const sqliteVersion = spawnSync('sqlite3', ['--version'], {encoding: 'utf8'}).stdout.split(' ')[0]

  log(STORE ? `timing against the kept store ${db} …` : `seeding ${POSTS} posts with ~${COMMENTS} comments each into ${db} …`)
  const started = performance.now()
  const seeded = STORE
    ? countRows()
    : medpanel(['seed-posts', '--count', String(POSTS), '--comments', String(COMMENTS), '--from', '2021-01-01T00:00:00Z', '--to', '2025-12-31T23:59:59Z', '--seed', '7'])
  const seedSeconds = (performance.now() - started) / 1000
  const client = medpanel(['register-client', '--name', 'Bench', '--url', 'https://bench.example', '--logo-url', 'https://bench.example/l.png', '--grant', 'conversations'])
  const {api_key: apiKey} = medpanel(['issue-api-key', client.client_id, '--methods', 'summary'])
  // The empty calls' own key (a summary key's bucket holds 100 calls and earns one a second, and
  // the summaries above use theirs), and a member's token for the token-info calls beside them.
  const {api_key: emptyKey} = medpanel(['issue-api-key', client.client_id, '--methods', 'summary'])
  // --force: the store already holds the client above, which the demo would otherwise refuse to seed beside.
  medpanel(['demo', '--force'])
  const {access_token: token} = medpanel(['issue-token', '--member', '1', '--client', 'demo-client'])

  // --- the same posts on PostgreSQL: seed-posts is deterministic for a given --seed, so the two
  // stores hold the same text and every count must agree.
  let pg
  if (POSTGRES) {
    const target = PG_STORE ? {flags: ['--database-url', PG_STORE], url: PG_STORE} : benchStore('postgres', 'conversations')
    const posts = STORE ? seeded.posts : POSTS
    const t0 = performance.now()
    let rows
    if (pgKept) {
      log(`timing against the kept PostgreSQL database ${PG_STORE} …`)
      rows = pgKept
    } else {
      log(`seeding ${posts} posts with ~${COMMENTS} comments each into PostgreSQL …`)
      rows = medpanel(
        ['seed-posts', '--count', String(posts), '--comments', String(COMMENTS), '--from', '2021-01-01T00:00:00Z', '--to', '2025-12-31T23:59:59Z', '--seed', '7'],
        target.flags,
      )
      log(`seeded ${target.url} (time against it again with --pg-store URL while that cluster runs)`)
    }
    const seconds = PG_STORE ? undefined : (performance.now() - t0) / 1000
    const pgClient = medpanel(
      ['register-client', '--name', 'Bench', '--url', 'https://bench.example', '--logo-url', 'https://bench.example/l.png', '--grant', 'conversations'],
      target.flags,
    )
    const {api_key: key} = medpanel(['issue-api-key', pgClient.client_id, '--methods', 'summary'], target.flags)
    const probe = await postgresProbe(target.url)
    pg = {target, rows, seconds, key, machine: machineLine(probe), times: [], warm: []}
    await probe.close()
    const running = await serve(target.flags)
    pgServer = running.child
    pg.url = running.url
  }

  // --- the service over HTTP (one process, as `serve` runs)
  const running = await serve(db)
  server = running.child
  const baseline = BASELINE ? await serve(db, BASELINE) : undefined
  baselineServer = baseline?.child
  const url = running.url
  const params = new URLSearchParams()
  for (const term of TERMS) params.append('terms[]', term)
  params.set('start', START)
  params.set('end', END)
  const call = async (at = url, key = apiKey) => {
    const t0 = performance.now()
    const res = await fetch(`${at}/conversations/summary?${params}`, {headers: {Accept: 'application/vnd.service-v1+json', 'X-Service-Conversation-API-Key': key}})
    const body = await res.json()
    if (res.status !== 200) throw new Error(`summary answered ${res.status}: ${JSON.stringify(body)}`)
    return {ms: performance.now() - t0, body}
  }
  // --- the same statements in the sqlite3 shell, interleaved with the HTTP calls so both see the
  // same machine load: the service's plan (the index part, the per-day statistics, the ragged
  // ends' documents), each statement run twice and the warm second runs added up.
  const repo = await tsImport('../src/interfaces/conversations/repository.ts', import.meta.url)
  const tokens = TERMS.map((t) => t.toLowerCase().match(/[a-z0-9]+/g))
  const query = {terms: TERMS, tokens, start: new Date(START).toISOString(), end: new Date(END).toISOString()}
  const plan = repo.summaryPlan(query)
  // An edge's documents are read by time, and through the search index only when the stretch holds
  // more than the service's limit; the shell runs what the service runs for this window.
  const edgeReads = plan.edges.flatMap((edge) => {
    const held = Number(shell([`select count(*) from (${repo.inlineSql(edge.sql)})`]).blocks[0][0])
    return held > repo.EDGE_SCAN_LIMIT ? [edge.sql, edge.wide] : [edge.sql]
  })
  const statements = [plan.index, ...plan.days.map((day) => day.sql), ...edgeReads].map(repo.inlineSql)
  for (let i = 0; i < 3; i++) await call()
  if (pg) for (let i = 0; i < 3; i++) await call(pg.url, pg.key)
  // Each round: one call after the shell's turn (the service idle for a while, as a caller finds
  // it), a second call straight after it (warm, as the shell's second run of each statement is),
  // then the shell. The shell's CPU time is the ceiling: its wall time is printed to the
  // millisecond per statement, too coarse for statements of a tenth of one.
  const httpTimes = []
  const warmTimes = []
  const shellTimes = []
  const shellWall = []
  const floorTimes = []
  const emptyIdleTimes = []
  const empty = async () => {
    const t0 = performance.now()
    const res = await fetch(`${url}/healthz`)
    await res.arrayBuffer()
    return performance.now() - t0
  }
  // An empty E call: the least work a summary can be asked for, one term that occurs nowhere
  // (EMPTY_TERM) over one second (EMPTY_AT) before any seeded post. It is checked, authenticated,
  // rate-counted, counted (its window holds no document: docs/conversations.md, "Windows of few
  // documents") and recorded like any other summary.
  const emptyParams = new URLSearchParams({'terms[]': EMPTY_TERM, start: EMPTY_AT, end: EMPTY_AT})
  const emptyCall = async (at = url) => {
    const t0 = performance.now()
    const res = await fetch(`${at}/conversations/summary?${emptyParams}`, {headers: {Accept: 'application/vnd.service-v1+json', 'X-Service-Conversation-API-Key': emptyKey}})
    const body = await res.json()
    if (res.status !== 200 || body.summary.uniques.posts + body.summary.uniques.comments !== 0) throw new Error(`the empty summary answered ${res.status}: ${JSON.stringify(body)}`)
    return performance.now() - t0
  }
  // An empty token-info call: A's lightest authenticated call, on the same serve and client.
  const tokenInfo = async (at = url) => {
    const t0 = performance.now()
    const res = await fetch(`${at}/user/oauth/token/info`, {headers: {Authorization: `Bearer ${token}`}})
    const body = await res.json()
    if (res.status !== 200) throw new Error(`token info answered ${res.status}: ${JSON.stringify(body)}`)
    return performance.now() - t0
  }
  for (let i = 0; i < 3; i++) {
    await emptyCall()
    await tokenInfo()
  }
  let answer
  for (let i = 0; i < RUNS; i++) {
    const {ms, body} = await call()
    httpTimes.push(ms)
    answer = body
    warmTimes.push((await call()).ms)
    if (pg) {
      const {ms, body} = await call(pg.url, pg.key)
      pg.times.push(ms)
      pg.answer = body
      pg.warm.push((await call(pg.url, pg.key)).ms)
    }
    const shellStarted = performance.now()
    const run = shell(statements.flatMap((statement) => [statement, statement]))
    const idle = performance.now() - shellStarted
    const second = (list) => list.filter((_, j) => j % 2 === 1).reduce((a, b) => a + b, 0)
    shellTimes.push(second(run.cpu))
    shellWall.push(second(run.times))
    // The floor: an empty call (/healthz) by the same client after the same idle as the summary's
    // first call, then as long again idle, so the next round's first call finds what it found before.
    floorTimes.push(await empty())
    await new Promise((resolve) => setTimeout(resolve, idle))
    // The empty E call after the same idle, for what a summary costs beyond it.
    emptyIdleTimes.push(await emptyCall())
    await new Promise((resolve) => setTimeout(resolve, idle))
  }
  // Empty E calls against empty token-info calls, back to back, alternating which goes first
  // (and, with --baseline, which build's serve goes first).
  const emptyTimes = []
  const tokenInfoTimes = []
  const pairRatios = []
  const base = {empty: [], tokenInfo: [], ratios: []}
  const pair = async (at, i, into) => {
    let e
    let t
    if (i % 2 === 0) {
      e = await emptyCall(at)
      t = await tokenInfo(at)
    } else {
      t = await tokenInfo(at)
      e = await emptyCall(at)
    }
    into.empty.push(e)
    into.tokenInfo.push(t)
    into.ratios.push(e / t)
  }
  const mine = {empty: emptyTimes, tokenInfo: tokenInfoTimes, ratios: pairRatios}
  if (baseline) for (let i = 0; i < 3; i++) await pair(baseline.url, i, {empty: [], tokenInfo: [], ratios: []})
  for (let i = 0; i < EMPTY_PAIRS; i++) {
    if (baseline && i % 4 >= 2) await pair(baseline.url, i, base)
    await pair(url, i, mine)
    if (baseline && i % 4 < 2) await pair(baseline.url, i, base)
  }
  // The counts checked against the search index alone: one statement, no statistics.
  const ceiling = shell([repo.inlineSql(repo.summarySql(query))])
  const shellCounts = {}
  for (const line of ceiling.blocks[0]) {
    const [t, kind, docs, matches] = line.split('|')
    shellCounts[`${t}:${kind}`] = {docs: Number(docs), matches: Number(matches)}
  }
  const agree =
    answer.summary.terms.every((term, t) => {
      const p = shellCounts[`${t}:post`] ?? {docs: 0, matches: 0}
      const c = shellCounts[`${t}:comment`] ?? {docs: 0, matches: 0}
      return term.posts === p.docs && term.comments === c.docs && term.matches === p.matches + c.matches
    }) &&
    answer.summary.uniques.posts === (shellCounts['-1:post']?.docs ?? 0) &&
    answer.summary.uniques.comments === (shellCounts['-1:comment']?.docs ?? 0)

  // --- LIKE scans over the window: substring counts per term, one pass per table
  const window = `published_at between '${new Date(START).toISOString()}' and '${new Date(END).toISOString()}'`
  const likeStatement = (table, text) => {
    const counts = TERMS.map((t, i) => `(length(x) - length(replace(x, '${t.toLowerCase()}', ''))) / ${t.length} as m${i}`).join(', ')
    const sums = TERMS.map((_, i) => `sum(m${i} > 0), sum(m${i})`).join(', ')
    const any = TERMS.map((_, i) => `m${i} > 0`).join(' or ')
    const filter = TERMS.map((t) => text.map((col) => `${col} like '%${t}%'`).join(' or ')).join(' or ')
    return `select ${sums}, sum(${any}) from (select ${counts} from (select lower(${text.join(" || ' ' || ")}) as x from ${table} where ${window} and (${filter})))`
  }
  const likeRuns = Math.max(3, Math.ceil(RUNS / 3))
  const scans = shell(Array.from({length: likeRuns}, () => [likeStatement('conversation_posts', ['title', 'content']), likeStatement('conversation_comments', ['content'])]).flat())
  const likeTimes = Array.from({length: likeRuns}, (_, i) => scans.times[2 * i] + scans.times[2 * i + 1])

  const http = median(httpTimes)
  const ceilingMs = median(shellTimes)
  const like = median(likeTimes)
  const fmt = (ms) => `${ms.toFixed(1)} ms`
  console.log(
    `conversations bench: ${seeded.posts} posts, ${seeded.comments} comments (${STORE ? 'kept store' : `seeded in ${seedSeconds.toFixed(1)} s`}); summary of ${TERMS.map((t) => JSON.stringify(t)).join(', ')} over ${START} .. ${END}`,
  )
  const warm = median(warmTimes)
  console.log(`  http   GET /conversations/summary, median of ${RUNS}:        ${fmt(http)} (a second call straight after: ${fmt(warm)})`)
  console.log(
    `  shell  sqlite3 ${sqliteVersion}, same ${statements.length} statements, median of ${RUNS}:  ${fmt(ceilingMs)} CPU (wall time as the shell rounds it: ${fmt(median(shellWall))})`,
  )
  console.log(`  like   LIKE scans in sqlite3, median of ${likeRuns}:             ${fmt(like)}`)
  const floor = median(floorTimes)
  console.log(`  floor  GET /healthz by the same client after the same idle, median of ${RUNS}: ${fmt(floor)}`)
  console.log(
    `  http / shell = ${(http / ceilingMs).toFixed(2)}x (goal <= 1.5x: ${http / ceilingMs <= 1.5 ? 'met' : 'missed'}); warm call / shell = ${(warm / ceilingMs).toFixed(2)}x`,
  )
  console.log(
    `  (floor + shell) / shell = ${((floor + ceilingMs) / ceilingMs).toFixed(2)}x: the least any HTTP call of these statements could measure here; http - floor = ${fmt(http - floor)}, ${((http - floor) / ceilingMs).toFixed(2)}x the shell`,
  )
  console.log(`  like / http  = ${(like / http).toFixed(1)}x (goal >= 100x: ${like / http >= 100 ? 'met' : 'missed'})`)
  const emptyIdle = median(emptyIdleTimes)
  const beyond = (http - emptyIdle) / ceilingMs
  console.log(`  empty  GET /conversations/summary of ${JSON.stringify(EMPTY_TERM)} over one second, after the same idle, median of ${RUNS}: ${fmt(emptyIdle)}`)
  console.log(
    `  (http - empty call) / shell = ${beyond.toFixed(2)}x (goal <= 1.5x: ${beyond <= 1.5 ? 'MET' : 'NOT MET'}); warm: (${fmt(warm)} - ${fmt(median(emptyTimes))}) / shell = ${((warm - median(emptyTimes)) / ceilingMs).toFixed(2)}x`,
  )
  const emptyMs = median(emptyTimes)
  const tokenInfoMs = median(tokenInfoTimes)
  const emptyRatio = median(pairRatios)
  console.log(`  empty E call ${fmt(emptyMs)}, empty token-info call (GET /user/oauth/token/info) ${fmt(tokenInfoMs)}: ${EMPTY_PAIRS} pairs back to back, alternating`)
  console.log(`  empty E / token info = ${emptyRatio.toFixed(2)}x, the median of the pairs' ratios (goal <= 2x: ${emptyRatio <= 2 ? 'MET' : 'NOT MET'})`)
  if (baseline) {
    console.log(
      `  baseline ${BASELINE}, same rounds: empty E call ${fmt(median(base.empty))}, token info ${fmt(median(base.tokenInfo))}, empty E / token info = ${median(base.ratios).toFixed(2)}x`,
    )
    baselineServer.kill('SIGTERM')
    baselineServer = undefined
  }
  console.log(
    `  counts: http and the index alone ${agree ? 'agree' : 'DISAGREE'}; per term ${answer.summary.terms.map((t) => `${t.term}=${t.matches}/${t.posts}p/${t.comments}c`).join(' ')}; uniques ${answer.summary.uniques.posts}p/${answer.summary.uniques.comments}c`,
  )
  if (!agree) process.exitCode = 1
  if (pg) {
    const summaryOf = (a) => JSON.stringify({terms: a.summary.terms, uniques: a.summary.uniques})
    const same = summaryOf(pg.answer) === summaryOf(answer)
    const pgMs = median(pg.times)
    console.log(`  ${pg.machine}`)
    console.log(
      `  postgres: ${pg.rows.posts} posts, ${pg.rows.comments} comments ${pg.seconds === undefined ? 'in a kept database' : `seeded in ${pg.seconds.toFixed(1)} s through seed-posts`}`,
    )
    console.log(`  postgres GET /conversations/summary, median of ${RUNS}:     ${fmt(pgMs)} (a second call straight after: ${fmt(median(pg.warm))})`)
    console.log(`  PostgreSQL / SQLite = ${(pgMs / http).toFixed(2)}x (same rounds); counts: PostgreSQL and SQLite ${same ? 'equal' : 'DIFFER'}`)
    if (!same) {
      console.log(`    PostgreSQL: ${summaryOf(pg.answer)}\n    SQLite:     ${summaryOf(answer)}`)
      process.exitCode = 1
    }
    pgServer.kill('SIGTERM')
    pgServer = undefined
  }
  server.kill('SIGTERM')
  server = undefined
  if (RSS_POSTS > 0) await wholeStoreAnswer()
} finally {
  server?.kill('SIGTERM')
  pgServer?.kill('SIGTERM')
  baselineServer?.kill('SIGTERM')
  if (KEEP || STORE) log(`kept ${db}`)
  else if (dir) rmSync(dir, {recursive: true, force: true})
}
