// How the ceiling itself responds to work per request. The same bare node:http server as the
// other benchmarks' ceiling, and copies of it that keep the CPU busy for a few microseconds
// before each answer, under the same autocannon load (50 connections), in alternating rounds.
// On a machine where the load generator and the server share two cores, an answer that leaves
// the client waiting costs the server a wake-up of the client inside its socket write, so the
// throughput falls far faster than the added microseconds alone explain. The printed ratios are
// what any server doing that much work per request can reach against the bare ceiling here.
// Usage: node bench/ceiling.mjs [--rounds 5] [--duration 2] [--connections 50] [--spins 5,10,15,20] (whole microseconds)
import {cpus} from 'node:os'
import {parseArgs} from 'node:util'
import {cannon, fmt, startBareServer, usageError, wholeNumber} from './lib.mjs'

let values
try {
  ;({values} = parseArgs({
    options: {
      rounds: {type: 'string', default: '5'},
      duration: {type: 'string', default: '2'},
      connections: {type: 'string', default: '50'},
      spins: {type: 'string', default: '5,10,15,20'},
    },
  }))
} catch (error) {
  usageError(error.message)
}
const rounds = wholeNumber('rounds', values.rounds)
const duration = wholeNumber('duration', values.duration)
const connections = wholeNumber('connections', values.connections)
const spins = [0, ...values.spins.split(',').map((spin) => wholeNumber('spins', spin.trim()))]
const body = '{"resource_owner_id":1,"scopes":["profile"],"expires_in_seconds":7200,"application":{"uid":"demo-client"},"created_at":1795306546}'
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const servers = []
try {
  for (const spin of spins) servers.push({spin, server: await startBareServer(body, {spinMicros: spin}), rates: [], p99: []})
  for (const {server} of servers) await cannon({url: server.url, connections, duration: 1})
  for (let round = 0; round < rounds; round++) {
    for (const entry of servers) {
      const result = await cannon({url: entry.server.url, connections, duration})
      entry.rates.push(result.requests.average)
      entry.p99.push(result.latency.p99)
    }
  }
  console.log(
    `machine: ${cpus().length} cores, ${cpus()[0]?.model.trim()}, Node ${process.version}; median of ${rounds} alternating rounds of ${duration} s, ${connections} connections`,
  )
  const base = median(servers[0].rates)
  for (const {spin, rates, p99} of servers) {
    const rate = median(rates)
    console.log(
      `  bare node:http${spin ? ` + ${String(spin).padStart(2)} µs of work per request` : ' (the ceiling)           '}: ${fmt(rate).padStart(7)} req/s  p99 ${median(p99)} ms  ratio ${(rate / base).toFixed(2)}`,
    )
  }
} finally {
  await Promise.all(servers.map(({server}) => server.stop()))
}
