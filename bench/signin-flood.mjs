// A member's sign-in during a password-hash flood, against the same sign-in with nothing else going
// on: the quiet time is the ceiling, measured in the same run. The flood is what security round
// four measured from outside: twelve loopback addresses (127.0.1.1-12), each keeping two sign-ins
// with made-up e-mails in flight (each costs a decoy hash), sending again as soon as one is
// answered, 429s included. The flood's network is on --guessing-allow, so the limit across members
// never locks it and nothing but the hash queue holds it back (an attacker with more addresses
// than that limit's 30 failures each would get the same). serve runs as shipped: the default
// password cost (17), one hash slot per core, the access log on.
// Each sample is one sign-in of a browser that has never signed in (no device cookie, which would
// put it first in line) from an address of its own (127.0.2.N), timed from the form's POST to its
// answer. Rounds alternate quiet and flood, and the goal is read from the medians:
// flood <= 5 x quiet + 1 s.
// Usage: npm run bench:signin-flood [-- --rounds 5 --samples 3 --password-hashes N]
import http from 'node:http'
import {tmpdir} from 'node:os'
import {parseArgs} from 'node:util'
import {BIN, SERVER_NODE_FLAGS, benchStore, cliJson, fmt, machineLine, median, startJsonServer, usageError, wholeNumber} from './lib.mjs'

let values
try {
  ;({values} = parseArgs({options: {rounds: {type: 'string', default: '5'}, samples: {type: 'string', default: '3'}, 'password-hashes': {type: 'string'}}}))
} catch (error) {
  usageError(error.message)
}
const rounds = wholeNumber('rounds', values.rounds)
const samples = wholeNumber('samples', values.samples)
const slots = values['password-hashes'] === undefined ? [] : ['--password-hashes', String(wholeNumber('password-hashes', values['password-hashes']))]

/** One request from the loopback address `from`, on a connection of its own. */
function send(base, from, method, path, headers = {}, body) {
  const url = new URL(path, base)
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        localAddress: from,
        agent: false,
        headers: {...headers, ...(body ? {'content-length': Buffer.byteLength(body)} : {})},
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => resolve({status: res.statusCode, headers: res.headers, body: text}))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** The sign-in form as a browser at `from` that never signed in gets it; answers a function posting it. */
async function formAt(base, from) {
  const page = await send(base, from, 'GET', '/oauth/authorized_applications')
  const cookie = [page.headers['set-cookie'] ?? []]
    .flat()
    .map((line) => line.split(';')[0])
    .join('; ')
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1]
  if (!csrf) throw new Error(`no sign-in form: ${page.status}`)
  return (email, password) => {
    const body = new URLSearchParams({return_to: '/oauth/authorized_applications', csrf_token: csrf, email, password}).toString()
    return send(base, from, 'POST', '/oauth/session', {'content-type': 'application/x-www-form-urlencoded', cookie, origin: base}, body)
  }
}

const store = benchStore('sqlite', 'signin-flood')
const member = {email: 'member@clinic.example', password: 'the right password'}
cliJson([
  'add-member',
  ...store.flags,
  '--email',
  member.email,
  '--password',
  member.password,
  '--first-name',
  'Bench',
  '--last-name',
  'Member',
  '--country',
  'US',
  '--specialty',
  'Cardiology',
])
const service = await startJsonServer(
  process.execPath,
  [...SERVER_NODE_FLAGS, BIN, 'serve', '--port', '0', '--no-worker', '--guessing-allow', '127.0.1.0/24', ...slots, ...store.flags, '--json'],
  {
    stderrFile: `${tmpdir()}/medpanel-bench-signin-flood-${process.pid}.log`,
  },
)
const base = service.url

let nextAddress = 1
/** One timed sign-in of the member from an address that has not signed in before. */
async function memberSignIn() {
  const from = `127.0.2.${nextAddress++}`
  const post = await formAt(base, from)
  const started = performance.now()
  const answer = await post(member.email, member.password)
  const ms = performance.now() - started
  if (answer.status !== 303) throw new Error(`the member's sign-in answered ${answer.status}: ${answer.body.slice(0, 200)}`)
  return ms
}

/** Starts the flood; resolves its stop function once every address has had a hash answered. */
async function startFlood() {
  const flood = {stop: false, hashed: 0, refused: 0, began: performance.now()}
  const firstHash = new Set()
  const loops = Array.from({length: 12}, async (_, a) => {
    const post = await formAt(base, `127.0.1.${a + 1}`)
    const lane = async (l) => {
      for (let i = 0; !flood.stop; i++) {
        const answer = await post(`nobody-${a}-${l}-${i}-${Math.random()}@clinic.example`, 'guess')
        if (answer.status === 401) {
          flood.hashed += 1
          firstHash.add(a)
        } else if (answer.status === 429) flood.refused += 1
        else throw new Error(`a flood sign-in answered ${answer.status}`)
      }
    }
    await Promise.all([lane(0), lane(1)])
  })
  while (firstHash.size < 12) await new Promise((resolve) => setTimeout(resolve, 50))
  return async () => {
    flood.stop = true
    await Promise.all(loops)
    return {...flood, seconds: (performance.now() - flood.began) / 1000}
  }
}

try {
  // Warm up: the first hash allocates scrypt's memory, the first page compiles its templates.
  await memberSignIn()
  const quiet = []
  const flooded = []
  const floodRates = []
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < samples; i++) quiet.push(await memberSignIn())
    const stop = await startFlood()
    for (let i = 0; i < samples; i++) flooded.push(await memberSignIn())
    const flood = await stop()
    floodRates.push({hashes: flood.hashed / flood.seconds, refused: flood.refused / flood.seconds})
  }
  const q = median(quiet)
  const f = median(flooded)
  const goal = 5 * q + 1000
  console.log(machineLine())
  console.log(`password hash slots: ${slots.length ? slots[1] : 'default (one per core, within the thread pool)'}; ${rounds} rounds x ${samples} sign-ins each way`)
  console.log(`member sign-in, quiet: median ${fmt(q)} ms (min ${fmt(Math.min(...quiet))}, max ${fmt(Math.max(...quiet))})`)
  console.log(`member sign-in, during the flood: median ${fmt(f)} ms (min ${fmt(Math.min(...flooded))}, max ${fmt(Math.max(...flooded))}) = ${fmt(f / q, 2)} x quiet`)
  console.log(
    `the flood: ${fmt(median(floodRates.map((r) => r.hashes)), 1)} hashes/s answered 401, ${fmt(median(floodRates.map((r) => r.refused)))} sign-ins/s refused 429 (queue full)`,
  )
  console.log(
    `goal: during the flood <= 5 x quiet + 1 s = ${fmt(goal)} ms: ${f <= goal ? 'MET' : 'NOT MET'} (the slowest sample: ${Math.max(...flooded) <= goal ? 'within' : 'beyond'} it)`,
  )
} finally {
  await service.stop()
}
