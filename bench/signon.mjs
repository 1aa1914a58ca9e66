// Token info throughput against the ceiling of a bare node:http server on the same machine, and
// what the metrics cost: the same serve with --no-metrics on the same store. All three run as
// child processes; autocannon (50 connections) runs here. They are measured in alternating
// 2-second rounds (each round in another order), so a change in the machine's load hits all alike.
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
// At least 9: a 5 % difference has to stand out of the rounds' noise on a shared machine.
const rounds = Math.max(9, Math.round(duration / round))

const target = benchStore(values.store, 'signon')
cliJson(['demo', ...target.flags])
const {access_token: token} = cliJson(['issue-token', ...target.flags, '--member', '1', '--client', 'demo-client'])

// As an operator runs it: access log on (stderr kept in a file), the delivery worker running.
const service = await startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, BIN, 'serve', '--port', '0', ...target.flags, '--json'], {
  stderrFile: `${tmpdir()}/medpanel-bench-signon-${process.pid}.serve.log`,
})
// The same, counting nothing and serving no /metrics: the difference is what the metrics cost.
const unmetered = await startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, BIN, 'serve', '--port', '0', '--no-metrics', ...target.flags, '--json'], {
  stderrFile: `${tmpdir()}/medpanel-bench-signon-${process.pid}.no-metrics.log`,
})
const bare = await startBareServer('{"resource_owner_id":1,"scopes":["profile"],"expires_in_seconds":7200,"application":{"uid":"demo-client"},"created_at":1795306546}')
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
try {
  const url = `${service.url}/user/oauth/token/info`
  const offUrl = `${unmetered.url}/user/oauth/token/info`
  const headers = {authorization: `Bearer ${token}`}
  for (const address of [url, offUrl]) {
    const check = await fetch(address, {headers})
    if (check.status !== 200) throw new Error(`token info answered ${check.status}`)
  }
  if ((await fetch(`${service.url}/metrics`)).status !== 200 || (await fetch(`${unmetered.url}/metrics`)).status !== 404) throw new Error('/metrics is not on and off as asked')

  await cannon({url, connections, duration: 2, headers})
  await cannon({url: offUrl, connections, duration: 2, headers})
  await cannon({url: bare.url, connections, duration: 2})

  const sides = {
    service: {url, headers, requests: 0, p99: [], errors: 0, rps: []},
    off: {url: offUrl, headers, requests: 0, p99: [], errors: 0, rps: []},
    bare: {url: bare.url, headers: {}, requests: 0, p99: [], errors: 0, rps: []},
  }
  // Each round in another order, metrics on and off always side by side (their ratio is the finer one).
  const orders = [
    ['service', 'off', 'bare'],
    ['bare', 'off', 'service'],
    ['off', 'service', 'bare'],
    ['bare', 'service', 'off'],
  ]
  for (let i = 0; i < rounds; i++) {
    for (const name of orders[i % orders.length]) {
      const side = sides[name]
      const r = await cannon({url: side.url, connections, duration: round, headers: side.headers})
      side.requests += r.requests.total
      side.rps.push(r.requests.total / round)
      side.p99.push(r.latency.p99)
      side.errors += r.non2xx + r.errors
    }
  }
  for (const name of ['service', 'off']) if (sides[name].errors) throw new Error(`token info (${name}) had ${sides[name].errors} failed answers`)
  const [a, off, b] = [sides.service, sides.off, sides.bare]
  const rpsA = a.requests / (rounds * round)
  const rpsOff = off.requests / (rounds * round)
  const rpsB = b.requests / (rounds * round)
  // The ratio of each round with its neighbour, then the median: a slow moment hits both sides.
  const ratio = median(a.rps.map((r, i) => r / b.rps[i]))
  const metered = median(a.rps.map((r, i) => r / off.rps[i]))
  const p99 = median(a.p99)
  console.log(`machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; ${rounds} alternating rounds of ${round} s; store: ${target.label}`)
  console.log(`token info  (GET /user/oauth/token/info): ${fmt(rpsA)} req/s  p99 ${p99} ms  (${connections} connections, ${rounds} x ${round} s)`)
  console.log(`bare node:http (ceiling):                  ${fmt(rpsB)} req/s  p99 ${median(b.p99)} ms  (same rounds, alternating)`)
  console.log(`ratio ${fmt(ratio, 2)} (goal >= 0.50)  p99 ${p99} ms (goal < 5 ms)  ${ratio >= 0.5 && p99 < 5 ? 'MET' : 'NOT MET'}`)
  console.log(
    `metrics on vs off (serve --no-metrics): ${fmt(rpsA)} vs ${fmt(rpsOff)} req/s, p99 ${p99} vs ${median(off.p99)} ms; on/off ${fmt(metered, 3)}, cost ${fmt((1 - metered) * 100, 1)}% (goal <= 5%)  ${metered >= 0.95 ? 'MET' : 'NOT MET'}`,
  )
} finally {
  await service.stop()
  await unmetered.stop()
  await bare.stop()
}
