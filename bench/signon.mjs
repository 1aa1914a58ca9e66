// Token info throughput against the ceiling of a bare node:http server on the same machine, and
// what the metrics cost: the same serve with --no-metrics on the same store. All run as child
// processes; autocannon (50 connections) runs here. They are measured in alternating 2-second
// rounds (each round in another order), so a change in the machine's load hits all alike.
// --store postgres adds a serve on SQLite to the same rounds and prints PostgreSQL against it,
// with the CPU each request costs in serve and in PostgreSQL (the "model:" lines).
// A Hono app with one route and no work (bench/hono-floor-server.mjs) runs in the same rounds: the
// framework's own floor between the ceiling and token info.
// The p99 of those rounds is bound by Little's law (mean latency = connections / throughput), so
// the latency goal is read at a fixed offered load too (--paced-rate, open loop: bench/lib.mjs).
// DPoP (RFC 9449): the same token info for a DPoP-bound token (a client_credentials token of the
// demo client, asked for with a proof), each request with a fresh proof, in the same rounds: what
// checking a proof costs (goal: at least half the bearer rate). Proofs are signed here before each
// round (one per request, as a client would), so the rounds measure serve, not the signing.
// Since a proof's ES256 signature check is most of its cost, each round also times, here, the
// signature check of one proof by node:crypto's verify and by jose (which serve uses: WebCrypto),
// and prints the bound each puts on DPoP / bearer: bearer's CPU per request in serve over that plus
// one check. Where the jose bound is below 0.5, the goal is 0.45 (issue 59).
// --baseline DIR adds another build's serve (a checkout built there) on the same store to the same
// rounds, and prints this build over it: how a change is shown to cost nothing.
// Usage: npm run bench:signon [-- --duration 10 --rounds 9 --connections 50 --paced-rate 1000 --store sqlite|postgres --baseline ../medpanel-main]
import {createHash, generateKeyPairSync, randomUUID, sign, verify} from 'node:crypto'
import {compactVerify, importJWK} from 'jose'
import {existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'
import {
  benchStore,
  cannon,
  cliJson,
  cpuRound,
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
  BIN,
  SERVER_NODE_FLAGS,
} from './lib.mjs'

let values
try {
  ;({values} = parseArgs({
    options: {
      duration: {type: 'string', default: '10'},
      rounds: {type: 'string'},
      connections: {type: 'string', default: '50'},
      'paced-rate': {type: 'string', default: '1000'},
      store: {type: 'string', default: 'sqlite'},
      baseline: {type: 'string'},
    },
  }))
} catch (error) {
  usageError(error.message)
}
const duration = wholeNumber('duration', values.duration)
const connections = wholeNumber('connections', values.connections)
const pacedRate = wholeNumber('paced-rate', values['paced-rate'])
const round = 2
// At least 9 unless asked: a 5 % difference has to stand out of the rounds' noise on a shared machine.
const rounds = values.rounds === undefined ? Math.max(9, Math.round(duration / round)) : wholeNumber('rounds', values.rounds)
const onPostgres = values.store === 'postgres'
// --baseline DIR: another checkout of medpanel, built (`npm run build` there), whose serve answers
// token info on the same store in the same alternating rounds: this build over it, round by
// round, is the figure a change is judged by (a whole run against another whole run drifts with
// the machine by more than the 5 % looked for).
const baselineBin = values.baseline === undefined ? undefined : resolve(values.baseline, 'bin/run.js')
if (baselineBin && !existsSync(resolve(values.baseline, 'dist'))) usageError(`--baseline ${values.baseline}: no dist/ there; run \`npm run build\` in it first`)

const target = benchStore(values.store, 'signon')
// On PostgreSQL, SQLite runs beside it in the same rounds: the ratio between them is the figure.
const beside = onPostgres ? benchStore('sqlite', 'signon') : undefined
const probe = onPostgres ? await postgresProbe(target.url) : undefined
const tokenOf = (flags) => {
  cliJson(['demo', ...flags])
  return cliJson(['issue-token', ...flags, '--member', '1', '--client', 'demo-client']).access_token
}
const token = tokenOf(target.flags)
const besideToken = beside ? tokenOf(beside.flags) : undefined

// As an operator runs it: access log on (stderr kept in a file), the delivery worker running.
const serve = (flags, label, extra = [], bin = BIN) =>
  startJsonServer(process.execPath, [...SERVER_NODE_FLAGS, bin, 'serve', '--port', '0', ...extra, ...flags, '--json'], {
    stderrFile: `${tmpdir()}/medpanel-bench-signon-${process.pid}.${label}.log`,
  })
const service = await serve(target.flags, 'serve')
// The same, counting nothing and serving no /metrics: the difference is what the metrics cost.
const unmetered = await serve(target.flags, 'no-metrics', ['--no-metrics'])
const sqliteService = beside ? await serve(beside.flags, 'sqlite') : undefined
const baselineService = baselineBin ? await serve(target.flags, 'baseline', [], baselineBin) : undefined
const answer = '{"resource_owner_id":1,"scopes":["profile"],"expires_in_seconds":7200,"application":{"uid":"demo-client"},"created_at":1795306546}'
const bare = await startBareServer(answer)
// The framework alone (Hono on @hono/node-server, one route, the same answer): its floor.
const floor = await startFrameworkFloor(answer)
// A DPoP key, and proofs signed with it by node:crypto (one per request, made before each round).
const dpopKey = generateKeyPairSync('ec', {namedCurve: 'P-256'})
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
const dpopHeader = b64({typ: 'dpop+jwt', alg: 'ES256', jwk: dpopKey.publicKey.export({format: 'jwk'})})
const proof = (htm, htu, extra = {}) => {
  const input = `${dpopHeader}.${b64({htm, htu, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...extra})}`
  return `${input}.${sign('sha256', Buffer.from(input), {key: dpopKey.privateKey, dsaEncoding: 'ieee-p1363'}).toString('base64url')}`
}
/**
 * CPU per proof, in this process, of checking the signatures of `proofs`: node:crypto's one-shot
 * verify (synchronous), and jose's compactVerify with the key imported once, 50 at a time as a
 * loaded serve has them (WebCrypto works on the thread pool: process.cpuUsage counts every thread).
 */
const dpopJwk = dpopKey.publicKey.export({format: 'jwk'})
const joseKey = await importJWK(dpopJwk, 'ES256')
async function verifyCosts(proofs) {
  const cpuMs = (from) => {
    const used = process.cpuUsage(from)
    return (used.user + used.system) / 1000 / proofs.length
  }
  const parts = proofs.map((one) => {
    const dot = one.lastIndexOf('.')
    return {input: Buffer.from(one.slice(0, dot)), signature: Buffer.from(one.slice(dot + 1), 'base64url')}
  })
  let from = process.cpuUsage()
  for (const {input, signature} of parts) if (!verify('sha256', input, {key: dpopKey.publicKey, dsaEncoding: 'ieee-p1363'}, signature)) throw new Error('a proof did not verify')
  const node = cpuMs(from)
  from = process.cpuUsage()
  for (let i = 0; i < proofs.length; i += 50) await Promise.all(proofs.slice(i, i + 50).map((one) => compactVerify(one, joseKey, {algorithms: ['ES256']})))
  return {node, jose: cpuMs(from)}
}

/** A fresh nonce, as a client learns one: a proof without it is refused with the nonce to use. */
const nonceFrom = async (base) => {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: {'content-type': 'application/x-www-form-urlencoded', dpop: proof('POST', `${base}/oauth/token`)},
    body: 'grant_type=client_credentials',
  })
  const nonce = res.headers.get('dpop-nonce')
  if (!nonce) throw new Error(`no DPoP nonce (${res.status})`)
  return nonce
}
const dpopToken = async (base) => {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: {'content-type': 'application/x-www-form-urlencoded', dpop: proof('POST', `${base}/oauth/token`, {nonce: await nonceFrom(base)})},
    body: new URLSearchParams({grant_type: 'client_credentials', client_id: 'demo-client', client_secret: 'demo-client-secret'}),
  })
  const body = await res.json()
  if (body.token_type !== 'DPoP') throw new Error(`no DPoP-bound token: ${JSON.stringify(body)}`)
  return body.access_token
}

try {
  const path = '/user/oauth/token/info'
  const headers = {authorization: `Bearer ${token}`}
  const boundToken = await dpopToken(service.url)
  const dpopSide = {
    url: `${service.url}${path}`,
    headers: {authorization: `DPoP ${boundToken}`},
    htu: `${service.url}${path}`,
    ath: createHash('sha256').update(boundToken).digest('base64url'),
    pool: 20_000,
    verify: {node: [], jose: []},
  }
  const sides = {
    service: {url: `${service.url}${path}`, headers},
    dpop: dpopSide,
    off: {url: `${unmetered.url}${path}`, headers},
    bare: {url: bare.url, headers: {}},
    floor: {url: floor.url, headers: {}},
  }
  if (sqliteService) sides.sqlite = {url: `${sqliteService.url}${path}`, headers: {authorization: `Bearer ${besideToken}`}}
  if (baselineService) sides.baseline = {url: `${baselineService.url}${path}`, headers}
  for (const [name, side] of Object.entries(sides)) {
    Object.assign(side, {requests: 0, p99: [], errors: 0, rps: []})
    if (name === 'bare' || name === 'floor' || name === 'dpop') continue
    const check = await fetch(side.url, {headers: side.headers})
    if (check.status !== 200) throw new Error(`token info (${name}) answered ${check.status}`)
  }
  if ((await fetch(`${service.url}/metrics`)).status !== 200 || (await fetch(`${unmetered.url}/metrics`)).status !== 404) throw new Error('/metrics is not on and off as asked')

  // Each request of the DPoP side takes the next of the proofs made for its round, with a nonce
  // learned just before; the pool grows with the rate seen, so no proof is ever sent twice.
  const run = async (side, seconds) => {
    if (side !== dpopSide) return cannon({url: side.url, connections, duration: seconds, headers: side.headers})
    const extra = {nonce: await nonceFrom(service.url), ath: side.ath}
    const proofs = Array.from({length: side.pool}, () => proof('GET', side.htu, extra))
    let next = 0
    const setupRequest = (req) => (next < proofs.length ? {...req, headers: {...req.headers, dpop: proofs[next++]}} : null)
    const r = await cannon({url: side.url, connections, duration: seconds, headers: side.headers, requests: [{setupRequest}]})
    if (next >= proofs.length) throw new Error(`the DPoP side used all ${proofs.length} proofs made for its round: make more`)
    side.pool = Math.max(side.pool, Math.ceil(next * 1.5))
    // Just after the round, on proofs of the same key: what one signature check costs, each way.
    if (proofs.length - next >= 500) {
      const costs = await verifyCosts(proofs.slice(next, next + 2000))
      side.verify.node.push(costs.node)
      side.verify.jose.push(costs.jose)
    }
    return r
  }
  const check = await fetch(dpopSide.url, {headers: {...dpopSide.headers, dpop: proof('GET', dpopSide.htu, {nonce: await nonceFrom(service.url), ath: dpopSide.ath})}})
  if (check.status !== 200) throw new Error(`token info (DPoP) answered ${check.status}: ${await check.text()}`)
  for (const side of Object.values(sides)) await run(side, 2)

  // Each round in another order (rotated, and reversed every other round), so no side always
  // follows the same neighbour; metrics on and off, and the two stores, meet in every round.
  const names = Object.keys(sides)
  const orderOf = (i) => {
    const rotated = [...names.slice(i % names.length), ...names.slice(0, i % names.length)]
    return i % 2 ? rotated.reverse() : rotated
  }
  // The model's inputs: CPU per request in each serve and, on PostgreSQL, in the cluster, and the
  // WAL flushes (the one thing commits do one at a time) during the PostgreSQL rounds.
  // The ceiling's and the floor's too: CPU per request is what the throughput ratio comes to when
  // each side has a core, and still reads when the machine is too loaded for throughput to.
  const model = {
    service: {serve: [], postgres: []},
    sqlite: {serve: [], postgres: []},
    dpop: {serve: [], postgres: []},
    baseline: {serve: [], postgres: []},
    bare: {serve: [], postgres: []},
    floor: {serve: [], postgres: []},
  }
  const pids = {
    service: [service.child.pid],
    sqlite: sqliteService ? [sqliteService.child.pid] : [],
    dpop: [service.child.pid],
    baseline: baselineService ? [baselineService.child.pid] : [],
    bare: [bare.child.pid],
    floor: [floor.child.pid],
  }
  const flushes = {ms: 0, requests: 0}
  for (let i = 0; i < rounds; i++) {
    for (const name of orderOf(i)) {
      const side = sides[name]
      const done = model[name] ? cpuRound(pids[name], name === 'service' ? probe : undefined, model[name]) : undefined
      const wal0 = name === 'service' ? await probe?.wal() : undefined
      const r = await run(side, round)
      done?.(r.requests.total)
      if (wal0?.ms !== undefined) {
        flushes.ms += (await probe.wal()).ms - wal0.ms
        flushes.requests += r.requests.total
      }
      side.requests += r.requests.total
      side.rps.push(r.requests.total / round)
      side.p99.push(r.latency.p99)
      side.errors += r.non2xx + r.errors
    }
  }
  const pacedP99 = await pacedP99s(sides, ['service', 'bare'], {rate: pacedRate})
  for (const name of names) {
    const what = name === 'floor' ? 'the framework floor' : `token info (${name})`
    if (name !== 'bare' && sides[name].errors) throw new Error(`${what} had ${sides[name].errors} failed answers`)
  }
  const {service: a, dpop: d, off, bare: b, floor: f, sqlite: s, baseline: base} = sides
  const rate = (side) => side.requests / (rounds * round)
  // The ratio of each round with its neighbour, then the median: a slow moment hits both sides.
  const ratioOf = (x, y) => median(x.rps.flatMap((r, i) => (y.rps[i] > 0 ? [r / y.rps[i]] : []))) ?? 0
  const ratio = ratioOf(a, b)
  const metered = ratioOf(a, off)
  const p99 = median(a.p99)
  const met = (ok) => (ok ? 'MET' : 'NOT MET')
  console.log(`${machineLine(probe)}; ${rounds} alternating rounds of ${round} s; store: ${target.label}${s ? ', SQLite beside it' : ''}`)
  console.log(`token info  (GET /user/oauth/token/info): ${fmt(rate(a))} req/s  p99 ${p99} ms  (${connections} connections, ${rounds} x ${round} s, ${target.label})`)
  if (s) console.log(`token info on SQLite (same rounds):        ${fmt(rate(s))} req/s  p99 ${median(s.p99)} ms`)
  console.log(`bare node:http (ceiling):                  ${fmt(rate(b))} req/s  p99 ${median(b.p99)} ms  (same rounds, alternating)`)
  console.log(
    `framework floor (Hono, one route, same answer): ${fmt(rate(f))} req/s  p99 ${median(f.p99)} ms; floor / ceiling ${fmt(ratioOf(f, b), 2)}, token info / floor ${fmt(ratioOf(a, f), 2)} (goal >= 0.60)  ${met(ratioOf(a, f) >= 0.6)}`,
  )
  const dpopRatio = ratioOf(d, a)
  // The bound one signature check puts on DPoP / bearer: a DPoP request does all a bearer one does, and checks a signature.
  const bearerCpu = median(model.service.serve)
  const verifyNode = median(d.verify.node)
  const verifyJose = median(d.verify.jose)
  const boundOf = (check) => bearerCpu / (bearerCpu + check)
  console.log(
    `token info, DPoP-bound token, a fresh proof each request: ${fmt(rate(d))} req/s  p99 ${median(d.p99)} ms; DPoP / bearer ${fmt(dpopRatio, 2)} (goal >= 0.50)  ${met(dpopRatio >= 0.5)}`,
  )
  console.log(
    `  one ES256 proof's signature check, same rounds, CPU here: node:crypto verify ${fmt(verifyNode, 3)} ms, jose ${fmt(verifyJose, 3)} ms; bearer in serve ${fmt(bearerCpu, 3)} ms/req; ` +
      `so DPoP / bearer is at most ${fmt(boundOf(verifyNode), 2)} with node:crypto, ${fmt(boundOf(verifyJose), 2)} with jose`,
  )
  console.log(`  where ES256 rules 0.50 out, DPoP / bearer ${fmt(dpopRatio, 2)} (goal >= 0.45)  ${met(dpopRatio >= 0.45)}`)
  console.log(`ratio ${fmt(ratio, 2)} (goal >= 0.50)  ${met(ratio >= 0.5)}; p99 at ${connections} connections ${p99} ms (the ceiling's ${median(b.p99)} ms)`)
  console.log(
    `at ${fmt(pacedRate)} req/s offered (open loop, 3 alternating rounds of 3 s): p99 token info ${fmt(pacedP99.service, 2)} ms, ceiling ${fmt(pacedP99.bare, 2)} ms (goal < 5 ms)  ${met(pacedP99.service < 5)}`,
  )
  if (s) {
    const pgVsSqlite = ratioOf(a, s)
    console.log(`PostgreSQL / SQLite: ${fmt(pgVsSqlite, 2)} (goal >= 0.80)  ${met(pgVsSqlite >= 0.8)}; SQLite / ceiling ${fmt(ratioOf(s, b), 2)}`)
  }
  console.log(
    `metrics on vs off (serve --no-metrics): ${fmt(rate(a))} vs ${fmt(rate(off))} req/s, p99 ${p99} vs ${median(off.p99)} ms; on/off ${fmt(metered, 3)}, cost ${fmt((1 - metered) * 100, 1)}% (goal <= 5%)  ${met(metered >= 0.95)}`,
  )
  if (base) {
    const change = ratioOf(a, base)
    console.log(
      `this build vs the baseline (${values.baseline}), same store, same rounds: token info ${fmt(rate(a))} vs ${fmt(rate(base))} req/s; this / baseline ${fmt(change, 3)} (goal >= 0.95)  ${met(change >= 0.95)}`,
    )
  }
  const ms = (x) => (x === undefined ? 'n/a' : fmt(x, 3))
  for (const [name, label] of [
    ['service', target.label],
    ['sqlite', 'SQLite'],
    ['dpop', `${target.label}, DPoP-bound`],
    ['baseline', `${target.label}, the baseline build`],
  ]) {
    if (!model[name].serve.length) continue
    const pg = name === 'service' && probe ? `, postgres ${ms(median(model[name].postgres))} ms` : ''
    const serialised = name === 'service' && probe ? `; serialised ${ms(flushes.requests ? flushes.ms / flushes.requests : undefined)} ms/req (WAL flushes)` : ''
    console.log(`model: token info on ${label}: CPU per request serve ${ms(median(model[name].serve))} ms${pg}${serialised}`)
  }
  const cpu = (name) => median(model[name].serve)
  console.log(
    `model: CPU per request, ceiling ${ms(cpu('bare'))} ms, floor ${ms(cpu('floor'))} ms, token info ${ms(cpu('service'))} ms: token info's CPU ratio ${fmt(cpu('bare') / cpu('service'), 2)} of the ceiling's, ${fmt(cpu('floor') / cpu('service'), 2)} of the floor's (the throughput ratios when each side has a core to itself)`,
  )
} finally {
  await Promise.all([service, unmetered, sqliteService, baselineService, bare, floor].filter(Boolean).map((one) => one.stop()))
  await probe?.close()
}
