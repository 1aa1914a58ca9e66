// A member's sign-in during a flood of made-up e-mails, against the same sign-in with nothing else
// going on: the quiet time is the ceiling, measured in the same run. Two floods, as security rounds
// four and five measured from outside: twelve loopback addresses (127.0.1.1-12) each keeping two
// sign-ins in flight, and 24 in flight spread over 200 addresses (127.0.1.1-200), each sent again
// as soon as it is answered, 429s included. The member signs in from three places: an address
// that never signed in, one it signed in from before, and one of the flood's (a shared exit). The flood's network is on --guessing-allow, so the limit across members
// never locks it and nothing but the hash queue holds it back (an attacker with more addresses
// than that limit's 30 failures each would get the same). serve runs as shipped: the default
// password cost (17), one hash slot per core, the access log on.
// Each sample is one sign-in of a browser with no device cookie (which would put it first in line),
// timed from the form's POST to its answer. Rounds alternate quiet and each flood, and the goal is
// read from the medians: flood <= 5 x quiet + 1 s, for each flood and each origin.
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
/**
 * Where the member signs in from: an address that never signed in, the one address the member
 * signs in from every round (it signed in a minute before), and an address the flood uses too
 * (a shared exit).
 */
const ORIGINS = {
  fresh: () => `127.0.2.${nextAddress++}`,
  recent: () => '127.0.3.1',
  shared: () => '127.0.1.1',
}
/** One timed sign-in of the member, from a browser with no device cookie at `from`. */
async function memberSignIn(from) {
  const post = await formAt(base, from)
  const started = performance.now()
  const answer = await post(member.email, member.password)
  const ms = performance.now() - started
  if (answer.status !== 303) throw new Error(`the member's sign-in from ${from} answered ${answer.status}: ${answer.body.slice(0, 200)}`)
  return ms
}

/**
 * The two floods security rounds four and five measured: twelve addresses keeping two sign-ins
 * each in flight, and 24 in flight spread over 200 addresses (each lane moves to another address
 * after every answer).
 */
const SHAPES = {
  '12 addresses x 2': {addresses: 12, lanes: 24},
  '24 in flight over 200 addresses': {addresses: 200, lanes: 24},
}

/** Starts a flood; resolves its stop function once every lane has had an answer. */
async function startFlood({addresses, lanes}) {
  const flood = {stop: false, answered: 0, refused: 0, began: performance.now()}
  const forms = []
  for (let a = 0; a < addresses; a++) forms.push(await formAt(base, `127.0.1.${a + 1}`))
  let lanesAnswered = 0
  const loops = Array.from({length: lanes}, async (_, l) => {
    for (let i = 0; !flood.stop; i++) {
      const answer = await forms[(l + i * lanes) % addresses](`nobody-${l}-${i}-${Math.random()}@clinic.example`, 'guess')
      if (i === 0) lanesAnswered += 1
      if (answer.status === 401) flood.answered += 1
      else if (answer.status === 429) flood.refused += 1
      else throw new Error(`a flood sign-in answered ${answer.status}`)
    }
  })
  while (lanesAnswered < lanes) await new Promise((resolve) => setTimeout(resolve, 50))
  return async () => {
    flood.stop = true
    await Promise.all(loops)
    return {...flood, seconds: (performance.now() - flood.began) / 1000}
  }
}

try {
  // Warm up: the first hash allocates scrypt's memory, the first page compiles its templates.
  await memberSignIn(ORIGINS.recent())
  const quiet = []
  const flooded = Object.fromEntries(Object.keys(SHAPES).map((shape) => [shape, Object.fromEntries(Object.keys(ORIGINS).map((origin) => [origin, []]))]))
  const floodRates = Object.fromEntries(Object.keys(SHAPES).map((shape) => [shape, []]))
  for (let round = 0; round < rounds; round++) {
    for (const [shape, flood] of Object.entries(SHAPES)) {
      for (let i = 0; i < samples; i++) quiet.push(await memberSignIn(ORIGINS.fresh()))
      const stop = await startFlood(flood)
      for (let i = 0; i < samples; i++) for (const [origin, from] of Object.entries(ORIGINS)) flooded[shape][origin].push(await memberSignIn(from()))
      const done = await stop()
      floodRates[shape].push({answered: done.answered / done.seconds, refused: done.refused / done.seconds})
    }
  }
  const q = median(quiet)
  const goal = 5 * q + 1000
  console.log(machineLine())
  console.log(`password hash slots: ${slots.length ? slots[1] : 'default (one per core, within the thread pool)'}; ${rounds} rounds x ${samples} sign-ins each way`)
  console.log(`member sign-in, quiet: median ${fmt(q)} ms (min ${fmt(Math.min(...quiet))}, max ${fmt(Math.max(...quiet))})`)
  console.log(`goal: during a flood <= 5 x quiet + 1 s = ${fmt(goal)} ms, for the median of each shape and origin`)
  let met = true
  for (const shape of Object.keys(SHAPES)) {
    const rates = floodRates[shape]
    console.log(`flood of ${shape}: ${fmt(median(rates.map((r) => r.answered)), 1)} made-up sign-ins/s answered 401, ${fmt(median(rates.map((r) => r.refused)), 1)}/s refused 429`)
    for (const origin of Object.keys(ORIGINS)) {
      const times = flooded[shape][origin]
      const f = median(times)
      met &&= f <= goal
      console.log(
        `  member from a ${origin} address: median ${fmt(f)} ms (min ${fmt(Math.min(...times))}, max ${fmt(Math.max(...times))}) = ${fmt(f / q, 2)} x quiet: ${f <= goal ? 'MET' : 'NOT MET'}`,
      )
    }
  }
  console.log(`goal ${met ? 'MET' : 'NOT MET'} in every shape and origin`)
} finally {
  await service.stop()
}
