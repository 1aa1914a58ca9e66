import {request as httpRequest} from 'node:http'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp, frontDoorOf} from '../../src/app.js'
import type {Readiness} from '../../src/deps.js'
import {revokeTokens} from '../../src/grants/repository.js'
import {iso, ManualClock} from '../../src/lib/clock.js'
import {sha256} from '../../src/lib/hashing.js'
import type {LogFormat} from '../../src/lib/log.js'
import {type RunningServer, startServer} from '../../src/server.js'
import type {Store} from '../../src/store/db.js'
import {writeTransaction} from '../../src/store/transactions.js'
import type {TestContext} from '../helpers/app.js'
import {openTestStore} from '../helpers/store.js'
import {setupClientAndMember, tokenFor} from '../interfaces/signon/flow.js'

/**
 * Token info through serve's server, where the front door (src/http/front-door.ts) answers a
 * remembered live bearer token before the app runs: the same answer, the same log line, the same
 * metrics as the app's route, and every other case left to the app.
 */
describe('the front door', () => {
  const PATH = '/user/oauth/token/info'
  let store: Store
  let server: RunningServer
  let ctx: TestContext
  let token: string
  let readiness: Readiness
  /** How many requests the front door answered itself. */
  let answered: number
  const lines: string[] = []

  const start = async (options: {format?: LogFormat; trustProxy?: string[]} = {}) => {
    store = await openTestStore()
    const clock = new ManualClock()
    readiness = {phase: 'ready', reason: ''}
    lines.length = 0
    answered = 0
    let app: ReturnType<typeof createApp> | undefined
    server = await startServer(
      {
        fetch: (request, env?: object) => app!.fetch(request, env),
        front: (request, response) => {
          const done = frontDoorOf(app!)?.(request, response) ?? false
          if (done) answered++
          return done
        },
      },
      {port: 0, host: '127.0.0.1'},
    )
    // `localhost` (any port) for app.request's own URLs, the listening address for the server's.
    const allowedHosts = ['localhost', `127.0.0.1:${server.port}`]
    app = createApp({store, clock, log: (line) => lines.push(line), logFormat: options.format, allowedHosts, readiness, trustProxy: options.trustProxy})
    ctx = {store, db: store.db, clock, app, logs: lines}
    const {client} = await setupClientAndMember(ctx)
    token = await tokenFor(ctx, client)
    lines.length = 0
  }
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    fetch(`${server.url}${path}`, {method, headers: {authorization: `Bearer ${token}`, ...headers}})
  /**
   * Asks until the token's row is remembered at the store's version, so that the next answer is
   * the front door's; answers the first answer (the app's route: nothing was remembered yet) and
   * the log lines written so far, then starts the counts afresh. On SQLite the first answer notes
   * the token used (a write, which moves the version): once that write is through (the writer
   * runs transactions in order) the next reads the row again and keeps it. On PostgreSQL that
   * write changes nothing cached, and the caches start once the store's listener listens.
   */
  const warm = async (headers: Record<string, string> = {}) => {
    const first = await get(PATH, headers)
    expect([first.status, answered]).toEqual([200, 0])
    await writeTransaction(store.db, async () => undefined)
    for (let asked = 0; answered === 0 && asked < 100; asked++) expect((await get(PATH, headers)).status).toBe(200)
    expect(answered).toBe(1)
    await new Promise((done) => setImmediate(done))
    const logged = lines.splice(0)
    answered = 0
    return {first, logged}
  }
  /** The status of token info asked with this Host header (fetch sends its own). */
  const statusWithHost = (host: string) =>
    new Promise<number | undefined>((done, fail) => {
      const asked = httpRequest(`${server.url}${PATH}`, {headers: {host, authorization: `Bearer ${token}`}}, (res) => {
        res.resume()
        done(res.statusCode)
      })
      asked.on('error', fail)
      asked.end()
    })
  /** An answer's headers but the two that differ between any two answers. */
  const headersOf = (res: Response) => [...res.headers].filter(([name]) => name !== 'date' && name !== 'x-request-id')

  afterEach(async () => {
    await server.close()
    await store.close()
  })

  describe('with the text log', () => {
    beforeEach(async () => void (await start()))

    it('answers a remembered token as the route does: status, headers, body and log line', async () => {
      // The first request reads the row (the app's route); the second is answered from memory.
      const {first: viaApp, logged} = await warm({'x-request-id': 'first-1'})
      const viaDoor = await get(PATH, {'x-request-id': 'second-2'})
      expect(answered).toBe(1)
      expect(viaDoor.status).toBe(200)
      expect(headersOf(viaDoor)).toEqual(headersOf(viaApp))
      expect(headersOf(viaDoor)).toEqual([
        ['cache-control', 'no-store'],
        ['connection', 'keep-alive'],
        ['content-length', expect.any(String)],
        ['content-type', 'application/json'],
        ['keep-alive', 'timeout=65'],
      ])
      expect(viaDoor.headers.get('x-request-id')).toBe('second-2')
      expect(await viaDoor.text()).toBe(await viaApp.text())
      await new Promise((done) => setImmediate(done))
      expect(lines).toHaveLength(1)
      const shape = (id: string) => new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z GET /user/oauth/token/info 200 \\d+\\.\\dms id=${id} addr=127\\.0\\.0\\.1$`)
      expect(logged[0]).toMatch(shape('first-1'))
      expect(lines[0]).toMatch(shape('second-2'))
    })

    it('makes a request id when the caller gives none, or none usable', async () => {
      await warm()
      const made = await get(PATH)
      const forged = await get(PATH, {'x-request-id': 'a b\tc'})
      expect(answered).toBe(2)
      expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    })

    it('sees a revocation at once: the next answer is the route refusing it', async () => {
      await warm()
      expect((await get(PATH)).status).toBe(200)
      expect(answered).toBe(1)
      await revokeTokens(store.db, {tokenHash: sha256(token)}, iso(ctx.clock.now()))
      const refused = await get(PATH)
      expect(refused.status).toBe(401)
      expect(await refused.json()).toEqual({error: 'invalid_request', error_description: 'The access token was revoked'})
      expect(answered).toBe(1)
    })

    it('sees the token expire by the clock, without any write', async () => {
      await warm()
      ctx.clock.advance(3599)
      expect(((await (await get(PATH)).json()) as {expires_in_seconds: number}).expires_in_seconds).toBe(1)
      expect(answered).toBe(1)
      ctx.clock.advance(1)
      const dead = await get(PATH)
      expect(dead.status).toBe(401)
      expect(await dead.json()).toEqual({error: 'invalid_request', error_description: 'The access token expired'})
      expect(answered).toBe(1)
    })

    it('leaves everything else to the app, which answers it as always', async () => {
      await warm()
      const cases: [string, Record<string, string>, string, number][] = [
        [`${PATH}?x=1`, {}, 'GET', 200],
        ['/oauth/token/info/', {}, 'GET', 404],
        [PATH, {}, 'HEAD', 200],
        [PATH, {authorization: 'Bearer nope'}, 'GET', 401],
        [PATH, {authorization: `DPoP ${token}`}, 'GET', 401],
        [PATH, {dpop: 'x.y.z'}, 'GET', 200],
      ]
      for (const [path, headers, method, status] of cases) expect([path, headers, (await get(path, headers, method)).status]).toEqual([path, headers, status])
      // A Host not plainly one of the service's names: the app's host check decides.
      for (const [host, status] of [
        ['evil.example', 421],
        // @hono/node-server refuses a Host its URL parser spells otherwise, or cannot parse
        [`LOCALHOST:${server.port}`, 400],
        [`127.0.0.1:${server.port}0`, 400],
        ['127.0.0.1:1', 421],
      ] as const) {
        expect([host, await statusWithHost(host)]).toEqual([host, status])
      }
      expect(answered).toBe(0)
      // The other spelling of the path is the front door's too.
      expect((await get('/oauth/token/info')).status).toBe(200)
      expect(answered).toBe(1)
      // So is another of the service's names (any of its allowed hosts).
      expect(await statusWithHost(`localhost:${server.port}`)).toBe(200)
      expect(answered).toBe(2)
    })

    it('answers nothing while the service is starting: the app refuses with 503', async () => {
      await warm()
      readiness.phase = 'starting'
      expect((await get(PATH)).status).toBe(503)
      readiness.phase = 'ready'
      expect((await get(PATH)).status).toBe(200)
      expect(answered).toBe(1)
    })
  })

  it('counts its answers in the HTTP metrics under the route, as the app does', async () => {
    await start()
    await warm()
    const counted = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text()
      const route = 'interface="A",route="/user/oauth/token/info"'
      const count = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels.replace(/[/.]/g, '\\$&')}\\} (\\d+)$`, 'm').exec(text)?.[1])
      return [count('medpanel_http_requests_total', `${route},status_class="2xx"`), count('medpanel_http_request_duration_seconds_count', route)]
    }
    const [requests, timed] = await counted()
    expect(requests).toBeGreaterThan(1)
    expect(timed).toBe(requests)
    await get(PATH)
    await get(PATH)
    expect(answered).toBe(2)
    expect(await counted()).toEqual([requests! + 2, requests! + 2])
  })

  it('writes the JSON log line the app writes, the caller behind a trusted proxy named', async () => {
    await start({format: 'json', trustProxy: ['127.0.0.1']})
    const forwarded = {'x-forwarded-for': '203.0.113.7', 'x-request-id': 'req-1'}
    const {logged} = await warm(forwarded)
    await get(PATH, forwarded)
    expect(answered).toBe(1)
    await new Promise((done) => setImmediate(done))
    const [viaApp, viaDoor] = [logged[0], lines[0]].map((line) => JSON.parse(line ?? 'null') as Record<string, unknown>)
    const {time: _a, duration_ms: _b, ...app} = viaApp!
    const {time: _c, duration_ms: _d, ...door} = viaDoor!
    expect(door).toEqual(app)
    expect(door).toEqual({level: 'info', msg: 'request', request_id: 'req-1', interface: 'A', route: PATH, method: 'GET', status: 200, address: '203.0.113.7'})
  })
})
