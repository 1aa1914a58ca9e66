// RFC 7662 introspection (POST /oauth/introspect, the calling client's Basic credentials and the
// token in a form body) beside token info (GET /user/oauth/token/info, the bearer token), on one
// `serve` as shipped (access log on, metrics on, the delivery worker running), against a bare
// node:http server answering the same JSON as the ceiling. autocannon, 50 connections, alternating
// 2-second rounds in a new order each round; the ratios are the medians of each round's ratios.
// Resource servers and gateways call introspection on every request they receive, so it should
// keep up with token info: the goal is introspection >= 0.8x token info, p99 < 5 ms. The anchor
// is node-oidc-provider's introspection (bench/oidc-provider-server.mjs: its in-memory store, no
// logging) in the same rounds and harness; the goal is medpanel's ratio to the ceiling at least
// twice oidc-provider's. A Hono app with one route and no work (bench/hono-floor-server.mjs) runs
// in the same rounds: the framework's own floor between the ceiling and medpanel. With 50
// connections each waiting for its answer, the mean latency is 50 / throughput (Little's law), so
// the p99 of those rounds says how fast the server is, not how long a caller waits: the ceiling's
// own is 5-6 ms. The latency goal is read from rounds at a fixed offered load instead
// (--paced-rate, open loop: bench/lib.mjs pacedLatency).
// Usage: npm run bench:introspect [-- --rounds 9 --connections 50 --paced-rate 1000 --store sqlite|postgres]
import {tmpdir} from 'node:os'
import {parseArgs} from 'node:util'
import {
  BIN,
  SERVER_NODE_FLAGS,
  benchStore,
  cannon,
  cliJson,
  fmt,
  machineLine,
  median,
  pacedP99s,
  postgresProbe,
  startBareServer,
  startFrameworkFloor,
  startJsonServer,
  usageError,
  wholeNumber,
} from './lib.mjs'

let values
try {
  ;({values} = parseArgs({
    options: {
      rounds: {type: 'string', default: '9'},
      connections: {type: 'string', default: '50'},
      'paced-rate': {type: 'string', default: '1000'},
      store: {type: 'string', default: 'sqlite'},
    },
  }))
} catch (error) {
  usageError(error.message)
}
const rounds = wholeNumber('rounds', values.rounds)
const connections = wholeNumber('connections', values.connections)
const pacedRate = wholeNumber('paced-rate', values['paced-rate'])
if (values.store !== 'sqlite' && values.store !== 'postgres') usageError(`--store must be sqlite or postgres (got ${JSON.stringify(values.store)})`)
const round = 2

const target = benchStore(values.store, 'introspect')
const probe = values.store === 'postgres' ? await postgresProbe(target.url) : undefined
// The demo's client and member; the token belongs to the client that introspects it.
const demo = cliJson(['demo', ...target.flags])
const clientId = demo.client_id ?? 'demo-client'
const clientSecret = demo.client_secret ?? 'demo-client-secret'
const token = cliJson(['issue-token', ...target.flags, '--member', '1', '--client', clientId]).access_token
const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`

const service = await startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, BIN, 'serve', '--port', '0', ...target.flags, '--json'], {
  stderrFile: `${tmpdir()}/medpanel-bench-introspect-${process.pid}.log`,
})
const anchor = await startJsonServer(process.execPath, [new URL('./oidc-provider-server.mjs', import.meta.url).pathname])
const answer = '{"active":true,"scope":"profile","client_id":"demo-client","token_type":"bearer","iat":1795306546,"exp":1795313746,"sub":"1"}'
const bare = await startBareServer(answer)
// The framework alone (Hono on @hono/node-server, one route, the same answer to the same POST).
const floor = await startFrameworkFloor(answer)
try {
  const form = new URLSearchParams({token, token_type_hint: 'access_token'}).toString()
  const sides = {
    introspect: {
      url: `${service.url}/oauth/introspect`,
      method: 'POST',
      headers: {authorization: basic, 'content-type': 'application/x-www-form-urlencoded'},
      body: form,
    },
    info: {url: `${service.url}/user/oauth/token/info`, method: 'GET', headers: {authorization: `Bearer ${token}`}},
    bare: {url: bare.url, method: 'POST', headers: {'content-type': 'application/x-www-form-urlencoded'}, body: form},
    floor: {url: floor.url, method: 'POST', headers: {'content-type': 'application/x-www-form-urlencoded'}, body: form},
    'oidc-provider': {
      url: `${anchor.url}/token/introspection`,
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${anchor.info.client_id}:${anchor.info.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({token: anchor.info.token, token_type_hint: 'access_token'}).toString(),
    },
  }
  const first = await fetch(sides.introspect.url, {method: 'POST', headers: sides.introspect.headers, body: form})
  const answer = await first.json()
  if (first.status !== 200 || answer.active !== true) throw new Error(`introspection answered ${first.status} ${JSON.stringify(answer)}`)
  if ((await fetch(sides.info.url, {headers: sides.info.headers})).status !== 200) throw new Error('token info did not answer 200')
  const anchored = sides['oidc-provider']
  const other = await (await fetch(anchored.url, {method: 'POST', headers: anchored.headers, body: anchored.body})).json()
  if (other.active !== true) throw new Error(`oidc-provider's introspection answered ${JSON.stringify(other)}`)

  for (const side of Object.values(sides)) {
    Object.assign(side, {rps: [], p99: [], errors: 0})
    await cannon({...side, connections, duration: 2})
  }
  const names = Object.keys(sides)
  const orderOf = (i) => {
    const rotated = [...names.slice(i % names.length), ...names.slice(0, i % names.length)]
    return i % 2 ? rotated.reverse() : rotated
  }
  for (let i = 0; i < rounds; i++) {
    for (const name of orderOf(i)) {
      const side = sides[name]
      const r = await cannon({url: side.url, method: side.method, headers: side.headers, body: side.body, connections, duration: round})
      side.rps.push(r.requests.total / round)
      side.p99.push(r.latency.p99)
      side.errors += r.non2xx + r.errors
    }
  }
  // Latency at a fixed offered load, for medpanel's two endpoints and the ceiling.
  const pacedP99 = await pacedP99s(sides, ['introspect', 'info', 'bare'], {rate: pacedRate})
  for (const name of names) if (sides[name].errors) throw new Error(`${name} had ${sides[name].errors} failed answers`)
  const {introspect: x, info, bare: b, floor: f, 'oidc-provider': o} = sides
  const ratioOf = (p, q) => median(p.rps.map((r, i) => r / q.rps[i]))
  const vsInfo = ratioOf(x, info)
  const p99 = median(x.p99)
  console.log(`${machineLine(probe)}; median of ${rounds} alternating rounds of ${round} s; store: ${target.label}; ${connections} connections`)
  console.log(`introspection (POST /oauth/introspect):   ${fmt(median(x.rps))} req/s  p99 ${p99} ms`)
  console.log(`token info    (GET /user/oauth/token/info): ${fmt(median(info.rps))} req/s  p99 ${median(info.p99)} ms`)
  console.log(`bare node:http (ceiling, same POST):       ${fmt(median(b.rps))} req/s  p99 ${median(b.p99)} ms`)
  console.log(
    `framework floor (Hono, one route, same POST):  ${fmt(median(f.rps))} req/s  p99 ${median(f.p99)} ms; floor / ceiling ${fmt(ratioOf(f, b), 2)}, introspection / floor ${fmt(ratioOf(x, f), 2)}`,
  )
  console.log(`oidc-provider ${anchor.info.version} (POST /token/introspection): ${fmt(median(o.rps))} req/s  p99 ${median(o.p99)} ms`)
  console.log(
    `introspection / token info ${fmt(vsInfo, 2)} (goal >= 0.80: ${vsInfo >= 0.8 ? 'met' : 'NOT MET'}); / ceiling ${fmt(ratioOf(x, b), 2)}; token info / ceiling ${fmt(ratioOf(info, b), 2)}; p99 at ${connections} connections ${p99} ms (the ceiling's ${median(b.p99)} ms)`,
  )
  console.log(
    `at ${fmt(pacedRate)} req/s offered (open loop, 3 alternating rounds of 3 s): p99 introspection ${fmt(pacedP99.introspect, 2)} ms, token info ${fmt(pacedP99.info, 2)} ms, ceiling ${fmt(pacedP99.bare, 2)} ms (goal < 5 ms: ${pacedP99.introspect < 5 ? 'met' : 'NOT MET'})`,
  )
  const vsAnchor = ratioOf(x, o)
  console.log(
    `oidc-provider / ceiling ${fmt(ratioOf(o, b), 2)}; medpanel's introspection / oidc-provider's ${fmt(vsAnchor, 2)} (goal >= 2.00: ${vsAnchor >= 2 ? 'met' : 'NOT MET'})`,
  )
} finally {
  await Promise.all([service, bare, floor, anchor].map((one) => one.stop()))
  await probe?.close()
}
