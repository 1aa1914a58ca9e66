// Interface C under load: 50 connections post withdrawals across 1,000 funded accounts while 10
// more read the same accounts' summaries, against `serve` in a child process, in --rounds rounds of
// --duration seconds that alternate with two ceilings taking the same POSTs: a bare node:http
// server, and the durable-append ceiling (node:http appending each body to a file and answering
// after a group fdatasync, as durable as a 201 of the ledger), so a change in the machine's load
// hits all alike; each figure is the median of the rounds. The goals (issue 59): withdrawals at
// >= 0.30 of the durable-append ceiling with p99 < 20 ms at 50 connections, summaries beside them
// >= 2,000/s. Then every account is checked: balance = credits − debits, over HTTP.
// --store postgres runs it on PostgreSQL (a throwaway durable cluster, or BENCH_DATABASE_URL's)
// with SQLite beside it in the same rounds, and --processes 1,2,3 measures each number of serve
// processes, each on a database of its own, sharing the withdrawal connections out over them.
// --connections 50,100,150 runs every side at each number of withdrawal connections, in the same
// alternating rounds: a closed loop of 50 callers keeps 17 in each of three processes, and a
// process's batch can hold no more than its own callers, so a side's throughput is the best of
// its loads (its capacity), and N serves / 1 serve is printed at each load and for the capacity.
// With --processes above 1 those three loads are the default; otherwise 50.
// Every side prints its "model:" line: CPU per request in serve and in PostgreSQL, and what
// commits do one at a time.
// --write-lanes N gives the PostgreSQL serves `--write-lanes N` (withdrawal batches at once across
// the processes; the shipped default when not given).
// --baseline DIR adds another build's serve (a checkout built there), on a store of its own seeded
// alike, to the same rounds, and prints this build over it round by round: how a change is shown
// to cost nothing (SQLite, one process).
// --without-standby (with --store postgres and a BENCH_DATABASE_URL whose primary has a synchronous
// standby, such as scripts/pg-formation.sh's) adds a PostgreSQL side on a database of the same
// cluster whose commits do not wait for the standby (synchronous_commit = local), to the same
// rounds: what the synchronous standby costs a withdrawal (docs/operations.md, High availability).
// BENCH_DATABASE_URL may name several hosts (target_session_attrs=read-write), as serve takes them.
// Usage: npm run build && node bench/balance.mjs [--rounds 5] [--duration 4] [--connections 50 | 50,100,150] [--readers 10] [--accounts 1000] [--store sqlite|postgres] [--processes 1[,2,3]] [--write-lanes N] [--baseline ../medpanel-main] [--without-standby]
import {register} from 'tsx/esm/api'
import {Decimal} from 'decimal.js'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {parseArgs} from 'node:util'
import {benchStore, cannon, cpuRound, fmt, machineLine, median, postgresProbe, startBareServer, startJsonServer, usageError, wholeNumber, BIN, SERVER_NODE_FLAGS} from './lib.mjs'

let values
try {
  ;({values} = parseArgs({
    options: {
      rounds: {type: 'string', default: '5'},
      duration: {type: 'string', default: '4'},
      connections: {type: 'string'},
      readers: {type: 'string', default: '10'},
      accounts: {type: 'string', default: '1000'},
      store: {type: 'string', default: 'sqlite'},
      processes: {type: 'string', default: '1'},
      'write-lanes': {type: 'string'},
      baseline: {type: 'string'},
      'without-standby': {type: 'boolean', default: false},
    },
  }))
} catch (error) {
  usageError(error.message)
}
const counts = [...new Set(values.processes.split(',').map((n) => wholeNumber('processes', n.trim())))].sort((a, b) => a - b)
if (values.store !== 'postgres' && values.store !== 'sqlite') usageError(`--store must be sqlite or postgres (got ${JSON.stringify(values.store)})`)
if (values.store !== 'postgres' && counts.some((n) => n > 1)) usageError('--processes above 1 needs --store postgres: SQLite serves one machine')
const rounds = wholeNumber('rounds', values.rounds)
const duration = wholeNumber('duration', values.duration)
// Withdrawal connections: one load, or several that every side runs at (the first is the ceiling's).
// Comparing processes, each side is measured at its capacity unless --connections says otherwise.
const connectionList = values.connections ?? (counts.some((n) => n > 1) ? '50,100,150' : '50')
const loads = [...new Set(connectionList.split(',').map((n) => wholeNumber('connections', n.trim())))]
const connections = loads[0]
const readers = wholeNumber('readers', values.readers, 0)
const accountCount = wholeNumber('accounts', values.accounts)
if (counts.some((n) => n > Math.min(...loads))) usageError('--processes: each serve process needs at least one of the --connections')
const writeLanes = values['write-lanes'] === undefined ? undefined : wholeNumber('write-lanes', values['write-lanes'])
if (writeLanes !== undefined && values.store !== 'postgres') usageError('--write-lanes needs --store postgres: SQLite has one writer')
const baselineBin = values.baseline === undefined ? undefined : resolve(values.baseline, 'bin/run.js')
if (baselineBin && (values.store !== 'sqlite' || counts.length > 1 || counts[0] !== 1))
  usageError('--baseline compares one serve on SQLite: leave --store and --processes as they are')
if (values['without-standby'] && (values.store !== 'postgres' || counts.length > 1 || counts[0] !== 1))
  usageError('--without-standby compares one serve on PostgreSQL: give --store postgres and no --processes')
if (baselineBin && !existsSync(resolve(values.baseline, 'dist'))) usageError(`--baseline ${values.baseline}: no dist/ there; run \`npm run build\` in it first`)
/** The serve flag of --write-lanes, for a PostgreSQL side. */
const lanesFlag = (side) => (writeLanes !== undefined && side.target.url ? ['--write-lanes', String(writeLanes)] : [])

// Seed through the real service functions (TypeScript, loaded by tsx) so the fixture is a ledger
// the service itself wrote. Members are inserted directly: hashing 1,000 passwords is not the point.
register()
const loadBefore = loadavg()[0]
const {openStore} = await import('../src/schema.ts')
const {registerClient} = await import('../src/registry/service.ts')
const {insertMember, findMemberBy} = await import('../src/registry/repository.ts')
const {postCredit} = await import('../src/interfaces/balance/service.ts')

const client = {id: 'bench-client', secret: 'bench-client-secret'}
const FUNDING = '1000.00'
async function seed(target) {
  const store = await openStore(target.url ? {url: target.url} : {file: target.flags[1]})
  const now = new Date()
  const stamp = now.toISOString()
  await registerClient(store, {name: 'Bench', url: 'https://bench.example.com', logo_url: 'https://bench.example.com/l.png', grants: ['balance']}, now, client)
  for (let i = 1; i <= accountCount; i++) {
    const id = await insertMember(store.db, {
      email: `bench${i}@example.com`,
      password_hash: 'unused',
      first_name: 'Bench',
      last_name: `Doctor ${i}`,
      country: 'US',
      specialty: 'Cardiology',
      npi: null,
      me: null,
      active: 1,
      password_changed_at: stamp,
      created_at: stamp,
      updated_at: stamp,
    })
    await postCredit(store.db, await findMemberBy(store.db, 'id', id), {type: 'HONORARIUM', amount: FUNDING, survey_id: 'BENCH'}, now)
  }
  await store.close()
}

/**
 * The durable-append ceiling: a bare node:http server, in its own process, that appends each POST's
 * body to a file and answers only once an fdatasync covering it has returned. Bodies that arrive
 * while a sync is under way wait for the next one, which takes them all: many requests share one
 * fdatasync, as the ledger's group commit shares one sync among a batch. What a server that only
 * has to make each request durable before answering can do on this disk and CPU.
 */
function startDurableAppendServer(body, file) {
  const source = `
    const http = require('node:http')
    const fs = require('node:fs')
    const body = ${JSON.stringify(body)}
    const fd = fs.openSync(${JSON.stringify(file)}, 'a')
    const newline = Buffer.from('\\n')
    let waiting = []
    let syncing = false
    const flush = () => {
      if (syncing || waiting.length === 0) return
      syncing = true
      const group = waiting
      waiting = []
      fs.write(fd, Buffer.concat(group.flatMap((one) => [one.data, newline])), (error) => {
        if (error) throw error
        fs.fdatasync(fd, (error) => {
          if (error) throw error
          for (const {res} of group) {
            res.writeHead(201, {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)})
            res.end(body)
          }
          syncing = false
          flush()
        })
      })
    }
    const server = http.createServer((req, res) => {
      const chunks = []
      req.on('data', (chunk) => chunks.push(chunk))
      req.on('end', () => {
        waiting.push({res, data: Buffer.concat(chunks)})
        flush()
      })
    })
    server.keepAliveTimeout = 65000
    server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({url: 'http://127.0.0.1:' + server.address().port})))`
  return startJsonServer(process.execPath, ['-e', source])
}

// The sides: what --store names, and on PostgreSQL SQLite beside it; one side per process count,
// each on a store of its own so each is verified on its own.
const sides = []
if (values.store === 'postgres') sides.push({label: 'SQLite', processes: 1, target: benchStore('sqlite', 'balance')})
for (const processes of counts) {
  const target = benchStore(values.store, 'balance')
  sides.push({label: `${target.label}${values.store === 'postgres' ? `, ${processes} serve${processes > 1 ? 's' : ''}` : ''}`, processes, target})
}
if (values['without-standby']) {
  sides.push({
    label: 'PostgreSQL without waiting for the standby, 1 serve',
    processes: 1,
    target: benchStore('postgres', 'balance_local', {synchronousCommit: 'local'}),
    local: true,
  })
}
if (baselineBin) sides.push({label: 'SQLite, the baseline build', processes: 1, target: benchStore('sqlite', 'balance-baseline'), bin: baselineBin})
const probe = values.store === 'postgres' ? await postgresProbe(sides.find((side) => side.target.url && !side.local).target.url) : undefined
if (probe?.standbys !== undefined) console.log(`PostgreSQL standbys: ${probe.standbys}`)
const seeding = performance.now()
for (const side of sides) await seed(side.target)
const seedSeconds = (performance.now() - seeding) / 1000

const auth = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`
const details = {
  CHARITY: {first_name: 'Bench', last_name: 'Doctor', email: 'bench@example.com'},
  CHECK: {first_name: 'Bench', last_name: 'Doctor', address_line1: '1 Main St', city: 'Springfield', region: 'US-IL', postal_code: '62701', country: 'US'},
}
// Four in five are fee-free; one in five is a CHECK, which posts a 2.50 fee transaction too.
const bodies = [
  JSON.stringify({type: 'CHARITY', amount: 1.25, member_details: details.CHARITY}),
  JSON.stringify({type: 'CHARITY', amount: 0.1, member_details: details.CHARITY}),
  JSON.stringify({type: 'CHARITY', amount: 2, member_details: details.CHARITY}),
  JSON.stringify({type: 'CHARITY', amount: 0.01, member_details: details.CHARITY}),
  JSON.stringify({type: 'CHECK', amount: 3.3, member_details: details.CHECK}),
]
const pick = (n) => Math.floor(Math.random() * n)
const account = () => 1 + pick(accountCount)

// As shipped: access log on (stderr to a file), durability on, the delivery worker running.
let logNumber = 0
for (const side of sides) {
  side.logs = Array.from({length: side.processes}, () => `${tmpdir()}/medpanel-bench-balance-${process.pid}-${logNumber++}.serve.log`)
  side.services = await Promise.all(
    side.logs.map((serveLog) =>
      startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, side.bin ?? BIN, 'serve', '--port', '0', ...side.target.flags, ...lanesFlag(side), '--json'], {
        stderrFile: serveLog,
      }),
    ),
  )
  side.created = 0
  // One run per load: what was measured with that many withdrawal connections.
  side.runs = loads.map((load) => ({
    side,
    connections: load,
    measured: {withdrawals: [], withdrawalP99: [], summaries: [], summaryP99: []},
    model: {serve: [], postgres: []},
    flushes: {ms: 0, withdrawals: 0},
    holders: [],
    lockWait: {ms: 0, withdrawals: 0},
  }))
}
const runs = sides.flatMap((side) => side.runs)
const answer = '{"transaction_id":"6f1c2d3e-0000-4000-8000-000000000000","uri":"/balance/transactions/6f1c2d3e-0000-4000-8000-000000000000"}'
const bare = await startBareServer(answer)
const ceiling = {rates: [], p99: []}
const appendFile = join(mkdtempSync(join(tmpdir(), 'medpanel-bench-append-')), 'withdrawals.log')
const durable = await startDurableAppendServer(answer, appendFile)
const appendCeiling = {rates: [], p99: []}
try {
  const headers = {authorization: auth, 'content-type': 'application/json'}
  const withdrawals = (url, seconds, setPath = true, load = connections) => ({
    url,
    connections: load,
    duration: seconds,
    method: 'POST',
    headers,
    requests: [
      {
        setupRequest: (req) => ({...req, ...(setPath ? {path: `/balance/user_id/${account()}/withdrawals`} : {}), body: bodies[pick(bodies.length)]}),
      },
    ],
  })
  const summaries = (url, seconds, readersHere) =>
    readersHere === 0
      ? Promise.resolve({requests: {total: 0}, latency: {p99: 0}, non2xx: 0, errors: 0})
      : cannon({
          url,
          connections: readersHere,
          duration: seconds,
          headers: {authorization: auth},
          requests: [{setupRequest: (req) => ({...req, path: `/balance/user_id/${account()}/summary`})}],
        })

  // Both kinds of connections are shared out over a side's serve processes, as a load balancer
  // would; the summaries' figures are their sum, and the worst p99 of them.
  const share = (total, n, i) => Math.floor(total / n) + (i < total % n ? 1 : 0)
  const load = (side, seconds, withdrawing = connections) =>
    Promise.all([
      Promise.all(side.services.map((one, i) => cannon(withdrawals(one.url, seconds, true, share(withdrawing, side.processes, i))))),
      Promise.all(side.services.map((one, i) => summaries(one.url, seconds, share(readers, side.processes, i)))).then((all) => ({
        requests: {total: all.reduce((sum, r) => sum + r.requests.total, 0)},
        latency: {p99: Math.max(...all.map((r) => r.latency.p99))},
        non2xx: all.reduce((sum, r) => sum + r.non2xx, 0),
        errors: all.reduce((sum, r) => sum + r.errors, 0),
      })),
    ])

  // Warm-up (counted in the verification like everything else).
  for (const side of sides) await load(side, 2)
  await cannon(withdrawals(bare.url, 2, false))
  await cannon(withdrawals(durable.url, 2, false))

  for (let round = 0; round < rounds; round++) {
    // Each round in another order, the ceiling last: no side or load always follows the same one.
    const order = runs.map((_, i) => runs[(i + round) % runs.length])
    for (const run of round % 2 ? order.reverse() : order) {
      const {side} = run
      const onPostgres = side.target.url !== undefined
      const database = side.target.database
      const done = cpuRound(
        side.services.map((one) => one.child.pid),
        onPostgres ? probe : undefined,
        run.model,
      )
      const wal0 = onPostgres ? await probe.wal() : undefined
      // The locks and reads of the withdrawals: the calls of the function that takes the account
      // locks (pg_stat_statements counts the call, waits included, not the statements inside).
      const LOCK = 'medpanel_withdrawal_context'
      const lock0 = onPostgres ? await probe.statements(database, LOCK) : undefined
      const stopSampling = onPostgres ? probe.sampleWriters(database) : undefined
      const [parts, s] = await load(side, duration, run.connections)
      const holding = await stopSampling?.()
      const non2xx = parts.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
      if (non2xx || s.non2xx || s.errors) throw new Error(`${side.label}: non-2xx: withdrawals ${non2xx}, summaries ${s.non2xx} (errors ${s.errors})`)
      const total = parts.reduce((sum, r) => sum + r.requests.total, 0)
      done(total + s.requests.total)
      if (wal0?.ms !== undefined) {
        run.flushes.ms += (await probe.wal()).ms - wal0.ms
        run.flushes.withdrawals += total
      }
      if (lock0 !== undefined) {
        run.lockWait.ms += (await probe.statements(database, LOCK)).ms - lock0.ms
        run.lockWait.withdrawals += total
      }
      // Little's law: sessions holding a row lock on average, over withdrawals per second.
      if (holding !== undefined && total > 0) run.holders.push((holding / (total / duration)) * 1000)
      side.created += total
      run.measured.withdrawals.push(total / duration)
      run.measured.withdrawalP99.push(Math.max(...parts.map((r) => r.latency.p99)))
      run.measured.summaries.push(s.requests.total / duration)
      run.measured.summaryP99.push(s.latency.p99)
    }
    // The two ceilings, in turn: bare first in even rounds, the durable append first in odd ones.
    for (const which of round % 2 ? ['append', 'bare'] : ['bare', 'append']) {
      const b = await cannon(withdrawals(which === 'bare' ? bare.url : durable.url, duration, false))
      if (b.non2xx || b.errors) throw new Error(`${which} ceiling: non-2xx ${b.non2xx}, errors ${b.errors}`)
      const into = which === 'bare' ? ceiling : appendCeiling
      into.rates.push(b.requests.total / duration)
      into.p99.push(b.latency.p99)
    }
  }

  // Verification, over HTTP: every account's available funds equals its credits minus its
  // counted debits, folded here from its own transaction list.
  for (const side of sides) {
    let checked = 0
    let withdrawalsSeen = 0
    const problems = []
    const url = side.services[0].url
    for (let id = 1; id <= accountCount; id++) {
      const [summary, list] = await Promise.all(
        ['summary', 'transactions'].map((p) => fetch(`${url}/balance/user_id/${id}/${p}`, {headers: {authorization: auth}}).then((r) => r.text())),
      )
      // Exact decimals: read the numbers as text, never as floats.
      const available = new Decimal(/"available_funds":(-?[\d.]+)/.exec(summary)[1])
      let credits = new Decimal(0)
      let debits = new Decimal(0)
      for (const m of list.matchAll(/"amount":(-?[\d.]+),.*?"type":"(\w+)",.*?"status":"(\w+)"/g)) {
        const amount = new Decimal(m[1])
        if (amount.isPositive() && m[3] === 'Completed') credits = credits.plus(amount)
        if (amount.isNegative() && ['Processing', 'OnHold', 'Completed'].includes(m[3])) debits = debits.plus(amount.neg())
        if (m[2] === 'WITHDRAWAL') withdrawalsSeen += 1
      }
      if (!available.eq(credits.minus(debits)) || available.isNegative()) problems.push(`user_id ${id}: available ${available} != ${credits} - ${debits}`)
      checked += 1
    }
    side.verification = {checked, withdrawalsSeen, problems}
  }
} finally {
  await Promise.all(sides.flatMap((side) => side.services ?? []).map((one) => one.stop()))
  await bare.stop()
  await durable.stop()
  rmSync(dirname(appendFile), {recursive: true, force: true})
  await probe?.close()
}

const met = (ok) => (ok ? 'met' : 'NOT MET')
const ms = (x) => (x === undefined ? 'n/a' : fmt(x, 3))
// Rounds where the other side answered nothing (a stalled machine) have no ratio to take.
const perRound = (a, b) => median(a.flatMap((x, i) => (b[i] > 0 ? [x / b[i]] : [])))
console.log(
  `${machineLine(probe)}; median of ${rounds} alternating rounds of ${duration} s; store: ${sides.map((s) => s.label).join(' | ')}; ${accountCount} accounts per store seeded in ${fmt(seedSeconds, 1)} s${values.store === 'postgres' ? `; PostgreSQL write lanes: ${writeLanes ?? 'default'}` : ''}`,
)
const base = {sqlite: sides.find((s) => s.label === 'SQLite'), one: sides.find((s) => s.target.url && s.processes === 1)}
/** A side's run at `load` connections. */
const runAt = (side, load) => side.runs.find((run) => run.connections === load)
/** A side's throughput: the best median rate over its loads (the only one with a single load). */
const capacity = (side) => side.runs.reduce((best, run) => (median(run.measured.withdrawals) > median(best.measured.withdrawals) ? run : best))
let failed = false
for (const side of sides) {
  console.log(`${side.label}:`)
  const over = side.processes > 1 ? ` over ${side.processes} processes` : ''
  for (const run of side.runs) {
    const {withdrawals, withdrawalP99, summaries, summaryP99} = run.measured
    const wps = median(withdrawals)
    const wp99 = median(withdrawalP99)
    console.log(`  withdrawals (POST …/withdrawals): ${fmt(wps)} /s  p99 ${wp99} ms  (${run.connections} connections${over})`)
    if (readers > 0) {
      const sps = median(summaries)
      const sp99 = median(summaryP99)
      console.log(`  summaries   (GET …/summary):      ${fmt(sps)} /s  p99 ${sp99} ms  (${readers} connections${over}, at the same time)`)
      console.log(`  summaries under write load: goal >= 2,000/s ${met(sps >= 2000)} (p99 ${sp99} ms)`)
    }
    const ceilingNote = loads.length > 1 ? ` (the ceilings at ${connections} connections)` : ''
    const ratio = perRound(withdrawals, appendCeiling.rates) ?? 0
    const bareRatio = perRound(withdrawals, ceiling.rates) ?? 0
    console.log(
      `  withdrawals: ratio to the durable-append ceiling ${fmt(ratio, 2)}${ceilingNote} (goal >= 0.30: ${met(ratio >= 0.3)}); p99 goal < 20 ms ${met(wp99 < 20)}; ratio to the bare POST ceiling ${fmt(bareRatio, 2)}`,
    )
    const sqlite = base.sqlite && runAt(base.sqlite, run.connections)
    if (side.target.url && sqlite && side.processes === 1) {
      const r = perRound(withdrawals, sqlite.measured.withdrawals) ?? 0
      console.log(`  PostgreSQL / SQLite withdrawals: ${fmt(r, 2)} (goal >= 0.60: ${met(r >= 0.6)})`)
    }
    const one = base.one && runAt(base.one, run.connections)
    if (side.local && one) {
      const r = perRound(one.measured.withdrawals, withdrawals) ?? 0
      console.log(`  with the synchronous standby / without it, withdrawals: ${fmt(r, 2)} (what waiting for the standby's flush costs; goal >= 0.50: ${met(r >= 0.5)})`)
    }
    if (side.target.url && side.processes > 1 && one) {
      const r = perRound(withdrawals, one.measured.withdrawals) ?? 0
      const goal = loads.length > 1 ? 'at this load' : `goal >= 0.90: ${met(r >= 0.9)}`
      console.log(`  ${side.processes} serves / 1 serve withdrawals: ${fmt(r, 2)} (${goal})`)
    }
    const requests = readers > 0 ? 'request (withdrawals and summaries)' : 'withdrawal'
    const pg = side.target.url ? `, postgres ${ms(median(run.model.postgres))} ms` : ''
    const serial = side.target.url
      ? `; serialised ${ms(run.flushes.withdrawals ? run.flushes.ms / run.flushes.withdrawals : undefined)} ms per withdrawal (WAL flushes); row lock held ${ms(median(run.holders))} ms; locking and reading ${ms(run.lockWait.withdrawals ? run.lockWait.ms / run.lockWait.withdrawals : undefined)} ms per withdrawal`
      : ''
    console.log(
      `  model: withdrawals on ${side.label}${loads.length > 1 ? ` at ${run.connections} connections` : ''}: CPU per ${requests} serve ${ms(median(run.model.serve))} ms${pg}${serial}`,
    )
  }
  // With several loads, the processes compare by what each side sustains at its best load.
  if (loads.length > 1 && side.target.url && side.processes > 1 && base.one) {
    const mine = capacity(side)
    const theirs = capacity(base.one)
    const r = median(mine.measured.withdrawals) / median(theirs.measured.withdrawals)
    console.log(
      `  capacity, the best load of each: ${side.processes} serves ${fmt(median(mine.measured.withdrawals))} /s at ${mine.connections} connections, 1 serve ${fmt(median(theirs.measured.withdrawals))} /s at ${theirs.connections}; ${side.processes} serves / 1 serve withdrawals: ${fmt(r, 2)} (goal >= 0.90: ${met(r >= 0.9)})`,
    )
  }
  const {checked, withdrawalsSeen, problems} = side.verification
  console.log(
    `  verification: ${problems.length ? 'FAILED' : 'OK'} — ${checked} accounts, balance = credits − debits for every one; ${withdrawalsSeen} withdrawals in the ledger (${side.created} in the measured rounds, plus warm-up)`,
  )
  if (problems.length) {
    console.log(problems.slice(0, 10).join('\n'))
    failed = true
  }
  // serve's last line: how many write transactions shared each commit (and its one sync; SQLite).
  const storeLine = readFileSync(side.logs[0], 'utf8')
    .trim()
    .split('\n')
    .reverse()
    .find((line) => line.startsWith('store: '))
  console.log(`  group commit: ${storeLine ? storeLine.slice('store: '.length) : 'no store line in the log'}`)
}
const baselineSide = sides.find((side) => side.bin)
if (baselineSide) {
  const [mine, theirs] = [sides[0].runs[0].measured, baselineSide.runs[0].measured]
  const w = perRound(mine.withdrawals, theirs.withdrawals) ?? 0
  const r = readers > 0 ? `, summaries ${fmt(perRound(mine.summaries, theirs.summaries) ?? 0, 3)}` : ''
  console.log(`this build vs the baseline (${values.baseline}), same rounds: this / baseline withdrawals ${fmt(w, 3)} (goal >= 0.95: ${met(w >= 0.95)})${r}`)
}
console.log(`bare node:http (ceiling, same POSTs): ${fmt(median(ceiling.rates))} /s  p99 ${median(ceiling.p99)} ms  (alternating rounds)`)
console.log(
  `durable append (ceiling: node:http appending each POST to a file, answered after a group fdatasync): ${fmt(median(appendCeiling.rates))} /s  p99 ${median(appendCeiling.p99)} ms; ${fmt(perRound(appendCeiling.rates, ceiling.rates) ?? 0, 2)} of the bare POST ceiling`,
)
console.log(`load average (1 min) before ${fmt(loadBefore, 2)}, after ${fmt(loadavg()[0], 2)}`)
if (failed) process.exitCode = 1
