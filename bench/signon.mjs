// Token info throughput against the ceiling of a bare node:http server on the same machine.
// Both servers run as child processes; autocannon (50 connections) runs here. The two are measured
// in alternating 2-second rounds, so a change in the machine's load hits both alike.
// Usage: npm run bench:signon [-- --duration 10 --connections 50 --store sqlite|postgres]
import {parseArgs} from 'node:util'
import {cpus, tmpdir} from 'node:os'
import {benchStore, cannon, cliJson, fmt, startBareServer, startJsonServer, BIN, SERVER_NODE_FLAGS} from './lib.mjs'

const {values} = parseArgs({
  options: {duration: {type: 'string', default: '10'}, connections: {type: 'string', default: '50'}, store: {type: 'string', default: 'sqlite'}},
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const round = 2
const rounds = Math.max(5, Math.round(duration / round))

const target = benchStore(values.store, 'signon')
cliJson(['demo', ...target.flags])
const {access_token: token} = cliJson(['issue-token', ...target.flags, '--member', '1', '--client', 'demo-client'])

// As an operator runs it: access log on (stderr kept in a file), the delivery worker running.
const service = await startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, BIN, 'serve', '--port', '0', ...target.flags, '--json'], {
  stderrFile: `${tmpdir()}/medpanel-bench-signon-${process.pid}.serve.log`,
})
const bare = await startBareServer('{"resource_owner_id":1,"scopes":["profile"],"expires_in_seconds":7200,"application":{"uid":"demo-client"},"created_at":1795306546}')
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
try {
  const url = `${service.url}/user/oauth/token/info`
  const headers = {authorization: `Bearer ${token}`}
  const check = await fetch(url, {headers})
  if (check.status !== 200) throw new Error(`token info answered ${check.status}`)

  await cannon({url, connections, duration: 2, headers})
  await cannon({url: bare.url, connections, duration: 2})

  const a = {requests: 0, p99: [], errors: 0, rps: []}
  const b = {requests: 0, p99: [], rps: []}
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 === 0 ? ['service', 'bare'] : ['bare', 'service']) {
      if (side === 'service') {
        const r = await cannon({url, connections, duration: round, headers})
        a.requests += r.requests.total
        a.rps.push(r.requests.total / round)
        a.p99.push(r.latency.p99)
        a.errors += r.non2xx + r.errors
      } else {
        const r = await cannon({url: bare.url, connections, duration: round})
        b.requests += r.requests.total
        b.rps.push(r.requests.total / round)
        b.p99.push(r.latency.p99)
      }
    }
  }
  if (a.errors) throw new Error(`token info had ${a.errors} failed answers`)
  const rpsA = a.requests / (rounds * round)
  const rpsB = b.requests / (rounds * round)
  // The ratio of each round with its neighbour, then the median: a slow moment hits both sides.
  const ratio = median(a.rps.map((r, i) => r / b.rps[i]))
  const p99 = median(a.p99)
  console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; ${rounds} alternating rounds of ${round} s; store: ${target.label}`)
  console.log(`token info  (GET /user/oauth/token/info): ${fmt(rpsA)} req/s  p99 ${p99} ms  (${connections} connections, ${rounds} x ${round} s)`)
  console.log(`bare node:http (ceiling):                  ${fmt(rpsB)} req/s  p99 ${median(b.p99)} ms  (same rounds, alternating)`)
  console.log(`ratio ${fmt(ratio, 2)} (goal >= 0.50)  p99 ${p99} ms (goal < 5 ms)  ${ratio >= 0.5 && p99 < 5 ? 'MET' : 'NOT MET'}`)
} finally {
  await service.stop()
  await bare.stop()
}
