// Token info throughput against the ceiling of a bare node:http server on the same machine.
// Both servers run as child processes; autocannon (50 connections, 10 s each) runs here.
// Usage: npm run build && node bench/signon.mjs [--duration 10] [--connections 50]
import {parseArgs} from 'node:util'
import {cannon, cliJson, fmt, startBareServer, startJsonServer, tempDb, BIN} from './lib.mjs'

const {values} = parseArgs({options: {duration: {type: 'string', default: '10'}, connections: {type: 'string', default: '50'}}})
const duration = Number(values.duration)
const connections = Number(values.connections)

const db = tempDb('signon.db')
cliJson(['demo', '--db', db])
const {access_token: token} = cliJson(['issue-token', '--db', db, '--member', '1', '--client', 'demo-client'])

const service = await startJsonServer(process.execPath, [BIN, 'serve', '--port', '0', '--db', db, '--json'])
const bare = await startBareServer('{"resource_owner_id":1,"scopes":["profile"],"expires_in_seconds":7200,"application":{"uid":"demo-client"},"created_at":1795306546}')
try {
  const url = `${service.url}/user/oauth/token/info`
  const check = await fetch(url, {headers: {authorization: `Bearer ${token}`}})
  if (check.status !== 200) throw new Error(`token info answered ${check.status}`)

  // Warm both up briefly so JIT and SQLite caches are in the same state.
  await cannon({url, connections, duration: 2, headers: {authorization: `Bearer ${token}`}})
  await cannon({url: bare.url, connections, duration: 2})

  const a = await cannon({url, connections, duration, headers: {authorization: `Bearer ${token}`}})
  const b = await cannon({url: bare.url, connections, duration})
  if (a.non2xx || a.errors) throw new Error(`token info had ${a.non2xx} non-2xx answers and ${a.errors} errors`)
  const ratio = a.requests.average / b.requests.average
  console.log(`token info  (GET /user/oauth/token/info): ${fmt(a.requests.average)} req/s  p99 ${a.latency.p99} ms  (${connections} connections, ${duration} s)`)
  console.log(`bare node:http (ceiling):                  ${fmt(b.requests.average)} req/s  p99 ${b.latency.p99} ms`)
  console.log(`ratio ${fmt(ratio, 2)} (goal >= 0.50)  p99 ${a.latency.p99} ms (goal < 5 ms)  ${ratio >= 0.5 && a.latency.p99 < 5 ? 'MET' : 'NOT MET'}`)
} finally {
  await service.stop()
  await bare.stop()
}
