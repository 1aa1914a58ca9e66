import {request as httpRequest} from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, memberRegistration, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {storeFlags} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

/*
 * The guessing limits as an attacker meets them: a real `serve`, and requests leaving from
 * several loopback addresses (127.0.0.x), so the server sees distinct callers.
 */

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One HTTP request from the loopback address `from`. */
function send(base: string, from: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const url = new URL(path, base)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method,
        localAddress: from,
        headers: {...headers, ...(body === undefined ? {} : {'content-length': String(Buffer.byteLength(body))})},
        agent: false,
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body: text}))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** The sign-in form's CSRF cookie and token, fetched once per address; answers a function that posts it. */
async function signInFormAt(base: string, from: string): Promise<(email: string, password: string) => Promise<Answer>> {
  const page = await send(base, from, 'GET', '/oauth/authorized_applications')
  const cookies = [page.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0]!)
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1]
  if (!csrf) throw new Error(`no sign-in form: ${page.status} ${page.body.slice(0, 200)}`)
  return (email, password) =>
    send(
      base,
      from,
      'POST',
      '/oauth/session',
      {'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; '), origin: base},
      new URLSearchParams({return_to: '/oauth/authorized_applications', csrf_token: csrf, email, password}).toString(),
    )
}

const DEMO = {client: 'demo-client', secret: 'demo-client-secret', key: 'mpk_demo_conversations_key'}
const messageOf = (html: string) => /class="error"[^>]*>([^<]*)</.exec(html)?.[1] ?? html.slice(0, 200)

describe('guessing limits through a real serve, from distinct loopback addresses', () => {
  const dir = tempDir('medpanel-guess-')
  let store: string[]
  let server: RunningCli
  let base: string
  let members = 0

  beforeAll(async () => {
    store = storeFlags(join(dir, 'guess.db'))
    server = await startCli(['serve', ...store, '--port', '0', '--demo', '--no-worker'])
    base = server.url
  })
  afterAll(async () => {
    await server?.stop()
  })

  /** A member of its own for each test, so no test's failures count against another's. */
  function newMember(): {email: string; password: string; id: number} {
    members += 1
    const email = `guess${members}@clinic.example`
    const password = `right password ${members}`
    const view = cliJson(memberRegistration(store, {email, password}))
    return {email, password, id: view.user_id}
  }

  const signInForm = (from: string) => signInFormAt(base, from)

  it('30 wrong passwords sent at once from one address: at most the free five are checked, the rest are 429', async () => {
    const member = newMember()
    const signIn = await signInForm('127.0.0.2')
    const answers = await Promise.all(Array.from({length: 30}, () => signIn(member.email, 'a wrong guess')))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(25)
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true)
  })

  it('six wrong passwords one after another: the sixth is refused with 429', async () => {
    const member = newMember()
    const signIn = await signInForm('127.0.0.3')
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await signIn(member.email, 'a wrong guess')).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  })

  it('8 failures from one address do not lock the member out from another', async () => {
    const member = newMember()
    const attacker = await signInForm('127.0.0.4')
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await attacker(member.email, 'a wrong guess')).status)
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect((await attacker(member.email, member.password)).status).toBe(429)
    const real = await signInForm('127.0.0.5')
    expect((await real(member.email, member.password)).status).toBe(303)
  })

  /**
   * A browser at `from` that keeps its cookies, as a real one does: the session, the rotated form
   * token and the device cookie a sign-in gives.
   */
  function browserAt(from: string) {
    const jar = new Map<string, string>()
    const keep = (answer: Answer) => {
      for (const line of [answer.headers['set-cookie'] ?? []].flat()) {
        const pair = line.split(';')[0]!
        const eq = pair.indexOf('=')
        if (pair.slice(eq + 1) === '' || /max-age=0/i.test(line)) jar.delete(pair.slice(0, eq))
        else jar.set(pair.slice(0, eq), pair.slice(eq + 1))
      }
      return answer
    }
    const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const form = async (fields: Record<string, string>, path: string) => {
      const page = keep(await send(base, from, 'GET', '/oauth/authorized_applications', {cookie: cookie()}))
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!
      const headers = {'content-type': 'application/x-www-form-urlencoded', cookie: cookie(), origin: base}
      return keep(await send(base, from, 'POST', path, headers, new URLSearchParams({...fields, csrf_token: csrf}).toString()))
    }
    return {
      signIn: (email: string, password: string) => form({return_to: '/oauth/authorized_applications', email, password}, '/oauth/session'),
      signOut: (everywhere = false) => form(everywhere ? {everywhere: 'yes'} : {}, '/oauth/sign_out'),
      hasDevice: () => jar.has('mp_device'),
    }
  }

  it('a burst of made-up e-mails from one address leaves it its clients and keys, and slows its sign-ins (spraying), except a browser the member signed in from', async () => {
    const member = newMember()
    const own = browserAt('127.0.0.6')
    expect((await own.signIn(member.email, member.password)).status).toBe(303)
    expect(own.hasDevice()).toBe(true)
    expect((await own.signOut()).status).toBe(303)
    const signIn = await signInForm('127.0.0.6')
    for (let i = 0; i < 31; i++) expect([401, 429]).toContain((await signIn(`nobody${i}@clinic.example`, 'guess')).status)
    // Thirty failures across members: this address's sign-ins wait, right passwords included.
    const fresh = await signInForm('127.0.0.6')
    expect((await fresh(member.email, member.password)).status).toBe(429)
    // The member's own browser, which signed in here before, is not held back.
    expect((await own.signIn(member.email, member.password)).status).toBe(303)
    expect((await send(base, '127.0.0.6', 'GET', '/balance/countries', {authorization: basicAuth(DEMO.client, DEMO.secret)})).status).toBe(200)
    const token = await send(
      base,
      '127.0.0.6',
      'POST',
      '/oauth/token',
      {'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(DEMO.client, DEMO.secret)},
      'grant_type=client_credentials',
    )
    expect(token.status, token.body).toBe(200)
  })

  it("twelve addresses guessing a member's password never lock the member out of their own browser", async () => {
    const member = newMember()
    const own = browserAt('127.0.0.60')
    expect((await own.signIn(member.email, member.password)).status).toBe(303)
    await own.signOut()
    // The new browser's form is fetched first, so only its sign-in falls after the guesses: the
    // member-wide lock they end with lasts seconds, not minutes (each guess it refuses is not counted).
    const newBrowser = await signInForm('127.0.0.73')
    // Twelve addresses, five wrong passwords each: the member-wide count passes its fifty.
    for (let a = 61; a <= 72; a++) {
      const attacker = await signInForm(`127.0.0.${a}`)
      // Past the fiftieth failure the guesses themselves wait (429) too.
      for (let i = 0; i < 5; i++) expect([401, 429]).toContain((await attacker(member.email, 'a wrong guess')).status)
    }
    // A new browser, at an address nobody guessed from, waits for the member-wide lock ...
    expect((await newBrowser(member.email, member.password)).status).toBe(429)
    // ... the member's own browser does not.
    expect((await own.signIn(member.email, member.password)).status).toBe(303)
    // Its own failures count against its device cookie alone: five, then it waits, like any pair.
    await own.signOut()
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await own.signIn(member.email, 'mistyped')).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  })

  it('"sign out of every browser" voids the device cookies given before it', async () => {
    const member = newMember()
    const own = browserAt('127.0.0.74')
    expect((await own.signIn(member.email, member.password)).status).toBe(303)
    expect((await own.signOut(true)).status).toBe(303)
    for (let a = 75; a <= 86; a++) {
      const attacker = await signInForm(`127.0.0.${a}`)
      for (let i = 0; i < 5; i++) await attacker(member.email, 'a wrong guess')
    }
    // The old device cookie no longer counts: this browser meets the member-wide lock too.
    expect((await own.signIn(member.email, member.password)).status).toBe(429)
  })

  it('made-up API keys slow only their own further guesses: the valid key, secret and grant still work from that address', async () => {
    const summary = (key: string) =>
      send(base, '127.0.0.7', 'GET', '/conversations/summary?terms%5B%5D=diabetes&start=2025-01-01T00:00:00Z&end=2025-12-31T23:59:59Z', {'x-service-conversation-api-key': key})
    const guesses: number[] = []
    for (let i = 0; i < 21; i++) guesses.push((await summary(`mpk_made_up_${i}`)).status)
    expect(guesses.slice(0, 20).every((s) => s === 401)).toBe(true)
    const late = await summary('mpk_made_up_late')
    expect(late.status).toBe(429)
    expect(JSON.parse(late.body)).toMatchObject({code: 429})
    expect((await summary(DEMO.key)).status).toBe(200)
    expect((await send(base, '127.0.0.7', 'GET', '/balance/countries', {authorization: basicAuth(DEMO.client, DEMO.secret)})).status).toBe(200)
    const token = await send(
      base,
      '127.0.0.7',
      'POST',
      '/oauth/token',
      {'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(DEMO.client, DEMO.secret)},
      'grant_type=client_credentials',
    )
    expect(token.status, token.body).toBe(200)
  })

  it("wrong secrets for a client from one address never refuse that client's right secret, from there or elsewhere", async () => {
    const token = (from: string, secret: string) =>
      send(
        base,
        from,
        'POST',
        '/oauth/token',
        {'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(DEMO.client, secret)},
        'grant_type=client_credentials',
      )
    for (const from of ['127.0.0.8', '127.0.0.9', '127.0.0.10']) {
      for (let i = 0; i < 25; i++) expect([401, 429]).toContain((await token(from, 'not-the-secret')).status)
    }
    expect((await token('127.0.0.8', 'not-the-secret')).status).toBe(429)
    for (const from of ['127.0.0.8', '127.0.0.11']) {
      expect((await token(from, DEMO.secret)).status).toBe(200)
      expect((await send(base, from, 'GET', '/balance/countries', {authorization: basicAuth(DEMO.client, DEMO.secret)})).status).toBe(200)
    }
  })

  it("one address cannot queue up password hashes: of 25 at once, a member's beyond four are refused, and another member signs in meanwhile", async () => {
    const victim = newMember()
    const other = newMember()
    const flood = await signInForm('127.0.0.12')
    const real = await signInForm('127.0.0.13')
    const burst = Promise.all(Array.from({length: 25}, (_, i) => flood(i % 2 ? victim.email : `x${i}@clinic.example`, 'guess')))
    const mine = await real(other.email, other.password)
    const answers = await burst
    const statuses = answers.map((a) => a.status)
    const seen = `the flood's statuses: ${statuses.join(', ')}`
    expect(mine.status, seen).toBe(303)
    // The victim's twelve: four checks at once per e-mail, and its pair locks after five failures,
    // so at least seven are refused. The made-up e-mails are answered 401 alike (with a decoy hash,
    // or without one while the slots are busy, after as long), never 429: they take no place in line.
    expect(answers.filter((a, i) => i % 2 === 1 && a.status === 429).length, seen).toBeGreaterThanOrEqual(7)
    expect(
      answers.filter((_, i) => i % 2 === 0).map((a) => a.status),
      seen,
    ).toEqual(Array(13).fill(401))
  })

  it("a deactivated member's right password is answered exactly as a wrong one", async () => {
    const member = newMember()
    cliJson(['update-member', ...store, String(member.id), '--deactivate'])
    const signIn = await signInForm('127.0.0.14')
    const right = await signIn(member.email, member.password)
    const wrong = await signIn(member.email, 'a wrong guess')
    expect(right.status).toBe(401)
    expect(wrong.status).toBe(401)
    expect(messageOf(right.body)).toBe(messageOf(wrong.body))
    expect(right.body).not.toContain('not active')
  })
})

describe('serve --trust-proxy', () => {
  const dir = tempDir('medpanel-proxy-')
  let store: string[]
  let proxied: RunningCli
  let direct: RunningCli
  let member: {email: string; password: string}

  beforeAll(async () => {
    store = storeFlags(join(dir, 'proxy.db'))
    member = {email: 'proxied@clinic.example', password: 'right password'}
    cliJson(memberRegistration(store, member))
    proxied = await startCli(['serve', ...store, '--port', '0', '--no-worker', '--trust-proxy', '127.0.0.1,127.0.0.20'])
    direct = await startCli(['serve', ...store, '--port', '0', '--no-worker'])
  })
  afterAll(async () => {
    await proxied?.stop()
    await direct?.stop()
  })

  async function attempts(server: RunningCli, from: string, forwarded: string, password: string, times: number): Promise<number[]> {
    const page = await send(server.url, from, 'GET', '/oauth/authorized_applications')
    const cookies = [page.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0]!)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!
    const statuses: number[] = []
    for (let i = 0; i < times; i++) {
      const body = new URLSearchParams({return_to: '/oauth/authorized_applications', csrf_token: csrf, email: member.email, password}).toString()
      const answer = await send(
        server.url,
        from,
        'POST',
        '/oauth/session',
        {'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; '), origin: server.url, 'x-forwarded-for': forwarded},
        body,
      )
      statuses.push(answer.status)
    }
    return statuses
  }

  it('behind a listed proxy, each forwarded caller is counted apart, and the access log names it', async () => {
    expect(await attempts(proxied, '127.0.0.1', '198.51.100.1', 'wrong', 6)).toEqual([401, 401, 401, 401, 401, 429])
    // Another caller behind the same proxy is not held back by the first one's failures.
    expect(await attempts(proxied, '127.0.0.1', '203.0.113.7, 198.51.100.2', member.password, 1)).toEqual([303])
    // The access line is written after the answer: wait for it to arrive, however late (and with
    // it every line before it).
    await until(() => /POST \/oauth\/session 303 .* addr=198\.51\.100\.2/.test(proxied.stderr()))
    // The right-most address that is not a listed proxy is the caller: 127.0.0.20 is one. Its lock
    // on 198.51.100.1 lasts a second, which a loaded machine may spend before this request: the
    // answer is 429 while it holds, and the access line names whom the request was counted against.
    const logged = proxied.stderr().length
    const [status] = await attempts(proxied, '127.0.0.1', '198.51.100.1, 127.0.0.20', member.password, 1)
    const line = /POST \/oauth\/session \d+ .*/
    await until(() => line.test(proxied.stderr().slice(logged)))
    expect(line.exec(proxied.stderr().slice(logged))![0]).toMatch(new RegExp(`^POST /oauth/session ${status} .* addr=198\\.51\\.100\\.1( |$)`))
    if (status !== 429) expect(status, 'a right password once the lock has passed').toBe(303)
  })

  /** Waits until the server's log shows a line matching `pattern` (lines are written as answers go out). */
  async function logged(server: RunningCli, pattern: RegExp): Promise<string> {
    for (;;) {
      const line = server
        .stderr()
        .split('\n')
        .find((l) => pattern.test(l))
      if (line !== undefined) return line
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  it('a forwarded caller is one address whatever port it is written with', async () => {
    const statuses: number[] = []
    for (let port = 40001; port <= 40006; port++) statuses.push(...(await attempts(proxied, '127.0.0.1', `10.77.7.7:${port}`, 'wrong', 1)))
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  })

  it('an IPv4-mapped IPv6 caller is the same caller as its IPv4 address', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push(...(await attempts(proxied, '127.0.0.1', i % 2 === 0 ? '::ffff:10.79.7.7' : '10.79.7.7', 'wrong', 1)))
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  })

  it('a forwarded value that is not an address names nobody: the proxy is the caller, and the log never shows it as written', async () => {
    expect(await attempts(proxied, '127.0.0.1', 'garbage addr=6.6.6.6', 'wrong', 1)).toEqual([401])
    const line = await logged(proxied, /POST \/oauth\/session 401 .*addr=127\.0\.0\.1$/)
    expect(line).not.toContain('garbage')
    expect(proxied.stderr()).not.toContain('addr=garbage')
  })

  it('from a peer that is not a listed proxy, X-Forwarded-For is ignored', async () => {
    const statuses = [...(await attempts(proxied, '127.0.0.30', '192.0.2.1', 'wrong', 3)), ...(await attempts(proxied, '127.0.0.30', '192.0.2.2', 'wrong', 3))]
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
  })

  it('without --trust-proxy the header is never read', async () => {
    const statuses = [...(await attempts(direct, '127.0.0.31', '192.0.2.3', 'wrong', 3)), ...(await attempts(direct, '127.0.0.31', '192.0.2.4', 'wrong', 3))]
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    await until(() => /POST \/oauth\/session 401 .* addr=127\.0\.0\.31/.test(direct.stderr()))
  })

  it('refuses a --trust-proxy entry that is not an address or range, with one Error: line', async () => {
    await expect(startCli(['serve', ...store, '--port', '0', '--no-worker', '--trust-proxy', 'proxy.internal'])).rejects.toThrow(
      /Error: --trust-proxy: "proxy\.internal" is not an IP address or CIDR range/,
    )
  })
})

describe('serve --guessing-allow', () => {
  const dir = tempDir('medpanel-allow-')
  let store: string[]
  let server: RunningCli
  const member = {email: 'allowed@clinic.example', password: 'right password'}

  beforeAll(async () => {
    store = storeFlags(join(dir, 'allow.db'))
    cliJson(memberRegistration(store, member))
    server = await startCli(['serve', ...store, '--port', '0', '--no-worker', '--guessing-allow', '127.0.0.90/31'])
  })
  afterAll(async () => server?.stop())

  async function signIns(from: string, attempts: [email: string, password: string][]): Promise<number[]> {
    const page = await send(server.url, from, 'GET', '/oauth/authorized_applications')
    const cookies = [page.headers['set-cookie'] ?? []].flat().map((line) => line.split(';')[0]!)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!
    const statuses: number[] = []
    for (const [email, password] of attempts) {
      const body = new URLSearchParams({return_to: '/oauth/authorized_applications', csrf_token: csrf, email, password}).toString()
      const headers = {'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; '), origin: server.url}
      statuses.push((await send(server.url, from, 'POST', '/oauth/session', headers, body)).status)
    }
    return statuses
  }

  const spray = Array.from({length: 31}, (_, i): [string, string] => [`nobody${i}@clinic.example`, 'guess'])

  it('exempts the listed network from the limit across members: its members sign in after 31 failures', async () => {
    expect(await signIns('127.0.0.91', spray)).toEqual(Array(31).fill(401))
    expect(await signIns('127.0.0.91', [[member.email, member.password]])).toEqual([303])
  })

  it('and nothing else: an address outside it waits', async () => {
    const statuses = await signIns('127.0.0.92', [...spray, [member.email, member.password]])
    expect(statuses.at(-1)).toBe(429)
  })

  it('refuses an entry that is not an address or range, with one Error: line', async () => {
    await expect(startCli(['serve', ...store, '--port', '0', '--no-worker', '--guessing-allow', 'hospital.internal'])).rejects.toThrow(
      /Error: --guessing-allow: "hospital\.internal" is not an IP address or CIDR range/,
    )
  })
})

describe('serve --password-hashes: a hash flood from many addresses', () => {
  const dir = tempDir('medpanel-flood-')
  let store: string[]
  let server: RunningCli

  beforeAll(async () => {
    store = storeFlags(join(dir, 'flood.db'))
    // One hash at a time makes the order exact. The flood's network is exempt from the limit
    // across members, so its made-up e-mails keep costing hashes and nothing but the queue holds
    // them back (a shared exit, or a botnet with more addresses than its failures lock).
    server = await startCli(['serve', ...store, '--port', '0', '--no-worker', '--password-hashes', '1', '--guessing-allow', '127.0.1.0/24'])
  })
  afterAll(async () => {
    await server?.stop()
  })

  /**
   * Starts a flood of made-up e-mails: `lanes` sign-ins always in flight, spread over `addresses`
   * loopback addresses (127.0.1.x), each sent again as soon as it is answered. Resolves once
   * every lane has had an answer; its stop function answers the flood's statuses.
   */
  async function flood(addresses: number, lanes: number) {
    let stop = false
    const statuses = new Map<number, number>()
    const forms = await Promise.all(Array.from({length: addresses}, (_, a) => signInFormAt(server.url, `127.0.1.${a + 1}`)))
    let answered = 0
    const loops = Array.from({length: lanes}, async (_, lane) => {
      for (let i = 0; !stop; i++) {
        const answer = await forms[(lane + i * lanes) % addresses]!(`nobody-${lane}-${i}-${Math.random()}@clinic.example`, 'guess')
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        if (i === 0) answered += 1
      }
    })
    await until(() => answered === lanes)
    return async () => {
      stop = true
      await Promise.all(loops)
      return Object.fromEntries(statuses)
    }
  }

  it('twelve addresses with two sign-ins each in flight: a member elsewhere, at an address used before and behind a flooding exit signs in, a typo and its retry too', async () => {
    const member = {email: 'flooded@clinic.example', password: 'right password'}
    cliJson(memberRegistration(store, member))
    const recent = await signInFormAt(server.url, '127.0.2.2')
    expect((await recent(member.email, member.password)).status).toBe(303)
    const stop = await flood(12, 24)
    const fresh = await signInFormAt(server.url, '127.0.2.1')
    const shared = await signInFormAt(server.url, '127.0.1.3')
    const mine = [
      await fresh(member.email, 'a typo'),
      await fresh(member.email, member.password),
      await recent(member.email, member.password),
      await shared(member.email, member.password),
    ].map((answer) => answer.status)
    const statuses = await stop()
    const seen = `flood answers by status: ${JSON.stringify(statuses)}`
    expect(mine, seen).toEqual([401, 303, 303, 303])
    // Made-up e-mails never wait in line, so nothing of the flood is refused for a full queue:
    // each is answered as a wrong password.
    expect(Object.keys(statuses), seen).toEqual(['401'])
  })

  it('24 in flight over 200 addresses: a member from a fresh address signs in', async () => {
    const member = {email: 'flooded-wide@clinic.example', password: 'right password'}
    cliJson(memberRegistration(store, member))
    const stop = await flood(200, 24)
    const answers = []
    for (const from of ['127.0.2.11', '127.0.2.12', '127.0.2.13']) answers.push((await (await signInFormAt(server.url, from))(member.email, member.password)).status)
    const statuses = await stop()
    expect(answers, JSON.stringify(statuses)).toEqual([303, 303, 303])
    expect(Object.keys(statuses), JSON.stringify(statuses)).toEqual(['401'])
  })

  it("refuses more slots than Node's thread pool leaves for hashes, naming what to set", async () => {
    await expect(startCli(['serve', ...store, '--port', '0', '--no-worker', '--password-hashes', '4'], {UV_THREADPOOL_SIZE: ''})).rejects.toThrow(
      /Error: --password-hashes 4 is more than Node's thread pool leaves for hashes \(3: UV_THREADPOOL_SIZE is 4, one thread kept for files and DNS\); set UV_THREADPOOL_SIZE=5 too/,
    )
  })
})

/** Resolves once `ready()` holds, checking after each turn of the event loop's I/O. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 20))
}
