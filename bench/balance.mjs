// Interface C under load: 50 connections post withdrawals across 1,000 funded accounts while 10
// more read the same accounts' summaries, against `serve` in a child process, in --rounds rounds of
// --duration seconds that alternate with a bare node:http server taking the same POSTs (the
// ceiling), so a change in the machine's load hits both alike; each figure is the median of the
// rounds. Then every account is checked: balance = credits − debits, over HTTP.
// --store postgres runs it on PostgreSQL (a throwaway cluster, or BENCH_DATABASE_URL's), and
// --processes N spreads the withdrawals over N serve processes on that one database.
// Usage: npm run build && node bench/balance.mjs [--rounds 5] [--duration 4] [--connections 50] [--accounts 1000] [--store sqlite|postgres] [--processes 1]
import {register} from 'tsx/esm/api'
import {Decimal} from 'decimal.js'
import {readFileSync} from 'node:fs'
import {cpus, tmpdir} from 'node:os'
import {parseArgs} from 'node:util'
import {benchStore, cannon, fmt, startBareServer, startJsonServer, BIN, SERVER_NODE_FLAGS} from './lib.mjs'

const {values} = parseArgs({
  options: {
    rounds: {type: 'string', default: '5'},
    duration: {type: 'string', default: '4'},
    connections: {type: 'string', default: '50'},
    readers: {type: 'string', default: '10'},
    accounts: {type: 'string', default: '1000'},
    store: {type: 'string', default: 'sqlite'},
    processes: {type: 'string', default: '1'},
  },
})
const processes = Number(values.processes)
if (processes > 1 && values.store !== 'postgres') throw new Error('--processes above 1 needs --store postgres: SQLite serves one machine')
const rounds = Number(values.rounds)
const duration = Number(values.duration)
const connections = Number(values.connections)
const readers = Number(values.readers)
const accountCount = Number(values.accounts)

// Seed through the real service functions (TypeScript, loaded by tsx) so the fixture is a ledger
// the service itself wrote. Members are inserted directly: hashing 1,000 passwords is not the point.
register()
const {openStore} = await import('../src/store/db.ts')
const {registerClient} = await import('../src/registry/service.ts')
const {insertMember, findMemberBy} = await import('../src/registry/repository.ts')
const {postCredit} = await import('../src/interfaces/balance/service.ts')

const target = benchStore(values.store, 'balance')
const client = {id: 'bench-client', secret: 'bench-client-secret'}
const FUNDING = '1000.00'
{
  const store = await openStore(target.url ? {url: target.url} : {file: target.flags[1]})
  const now = new Date()
  const stamp = now.toISOString()
  await registerClient(store.db, {name: 'Bench', url: 'https://bench.example.com', logo_url: 'https://bench.example.com/l.png', grants: ['balance']}, now, client)
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
const serveLogs = Array.from({length: processes}, (_, i) => `${tmpdir()}/medpanel-bench-balance-${process.pid}-${i}.serve.log`)
const services = await Promise.all(
  serveLogs.map((serveLog) => startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, BIN, 'serve', '--port', '0', ...target.flags, '--json'], {stderrFile: serveLog})),
)
const service = services[0]
const bare = await startBareServer('{"transaction_id":"6f1c2d3e-0000-4000-8000-000000000000","uri":"/balance/transactions/6f1c2d3e-0000-4000-8000-000000000000"}')
try {
  const headers = {authorization: auth, 'content-type': 'application/json'}
  const withdrawals = (url, seconds, setPath = true) => ({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    headers,
    requests: [
      {
        setupRequest: (req) => ({...req, ...(setPath ? {path: `/balance/user_id/${account()}/withdrawals`} : {}), body: bodies[pick(bodies.length)]}),
      },
    ],
  })
  const summaries = (seconds) => ({
    url: service.url,
    connections: readers,
    duration: seconds,
    headers: {authorization: auth},
    requests: [{setupRequest: (req) => ({...req, path: `/balance/user_id/${account()}/summary`})}],
  })

  // Warm-up (counted in the verification like everything else).
  await Promise.all([cannon(withdrawals(service.url, 2)), cannon(summaries(2)), cannon(withdrawals(bare.url, 2, false))])

  // The withdrawal connections are shared out over the serve processes, as a load balancer would.
  const share = (i) => Math.floor(connections / processes) + (i < connections % processes ? 1 : 0)
  const measured = {withdrawals: [], withdrawalP99: [], summaries: [], summaryP99: [], ceiling: [], ceilingP99: []}
  let created = 0
  for (let round = 0; round < rounds; round++) {
    const [parts, s] = await Promise.all([Promise.all(services.map((one, i) => cannon({...withdrawals(one.url, duration), connections: share(i)}))), cannon(summaries(duration))])
    const b = await cannon(withdrawals(bare.url, duration, false))
    const non2xx = parts.reduce((sum, r) => sum + r.non2xx + r.errors, 0)
    if (non2xx || s.non2xx || s.errors) throw new Error(`non-2xx: withdrawals ${non2xx}, summaries ${s.non2xx} (errors ${s.errors})`)
    const total = parts.reduce((sum, r) => sum + r.requests.total, 0)
    created += total
    measured.withdrawals.push(total / duration)
    measured.withdrawalP99.push(Math.max(...parts.map((r) => r.latency.p99)))
    measured.summaries.push(s.requests.total / duration)
    measured.summaryP99.push(s.latency.p99)
    measured.ceiling.push(b.requests.total / duration)
    measured.ceilingP99.push(b.latency.p99)
  }

  // Verification, over HTTP: every account's available funds equals its credits minus its
  // counted debits, folded here from its own transaction list.
  let checked = 0
  let withdrawalsSeen = 0
  const problems = []
  for (let id = 1; id <= accountCount; id++) {
    const [summary, list] = await Promise.all(
      ['summary', 'transactions'].map((p) => fetch(`${service.url}/balance/user_id/${id}/${p}`, {headers: {authorization: auth}}).then((r) => r.text())),
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
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const wps = median(measured.withdrawals)
  const wp99 = median(measured.withdrawalP99)
  const sps = median(measured.summaries)
  const sp99 = median(measured.summaryP99)
  const ceiling = median(measured.ceiling)
  const ratio = median(measured.withdrawals.map((w, i) => w / measured.ceiling[i]))
  const verified = problems.length === 0
  const where = `${target.label}${processes > 1 ? `, ${processes} serve processes` : ''}`
  const met = (ok) => (ok ? 'met' : 'NOT MET')
  console.log(
    `machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; median of ${rounds} alternating rounds of ${duration} s; store: ${where}`,
  )
  console.log(`withdrawals (POST …/withdrawals): ${fmt(wps)} /s  p99 ${wp99} ms  (${connections} connections, ${accountCount} accounts)`)
  console.log(`summaries   (GET …/summary):      ${fmt(sps)} /s  p99 ${sp99} ms  (${readers} connections, at the same time)`)
  console.log(`bare node:http (ceiling, same POSTs): ${fmt(ceiling)} /s  p99 ${median(measured.ceilingP99)} ms  (alternating rounds)`)
  console.log(`withdrawals: goal >= 5,000/s ${met(wps >= 5000)}; ratio ${fmt(ratio, 2)} (goal >= 0.20: ${met(ratio >= 0.2)}); p99 goal < 20 ms ${met(wp99 < 20)}`)
  console.log(`summaries under write load: goal >= 5,000/s ${met(sps >= 5000)}; p99 goal < 10 ms ${met(sp99 < 10)}`)
  console.log(
    `verification: ${verified ? 'OK' : 'FAILED'} — ${checked} accounts, balance = credits − debits for every one; ${withdrawalsSeen} withdrawals in the ledger (${created} in the measured rounds, plus warm-up)`,
  )
  if (!verified) {
    console.log(problems.slice(0, 10).join('\n'))
    process.exitCode = 1
  }
} finally {
  await Promise.all(services.map((one) => one.stop()))
  await bare.stop()
}
// serve's last line: how many write transactions shared each commit (and its one sync; SQLite).
const storeLine = readFileSync(serveLogs[0], 'utf8')
  .trim()
  .split('\n')
  .reverse()
  .find((line) => line.startsWith('store: '))
console.log(`group commit: ${storeLine ? storeLine.slice('store: '.length) : 'no store line in the log'}`)
