import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {receiverApp} from '../../src/interfaces/partner/receiver/routes.js'
import {openReceiverStore, type ReceiverStore} from '../../src/interfaces/partner/receiver/store.js'
import {ManualClock} from '../../src/lib/clock.js'
import type {Store} from '../../src/store/db.js'
import {openTestStore} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

/** serve --log-format: the same requests in both formats (the full scenario over HTTP is test/e2e/log-secrets.test.ts). */
describe('log formats', () => {
  let store: Store
  const clock = new ManualClock()
  beforeAll(async () => {
    store = await openTestStore()
  })
  afterAll(async () => store.close())

  const logged = async (format: 'text' | 'json', path: string, init: RequestInit = {}, db: Store['db'] = store.db): Promise<string[]> => {
    // A broken connection stands in for the store's when given (its keys are never reached).
    const lines: string[] = []
    const app = createApp({store: {db, reader: db, keys: store.keys}, clock, log: (line) => lines.push(line), logFormat: format})
    await app.request(path, init)
    return lines
  }

  it('text: the readable access line, unchanged', async () => {
    const [line] = await logged('text', '/balance/user_id/123/summary', {headers: {'x-request-id': 'abc-1'}})
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z GET \/balance\/user_id\/123\/summary 401 \d+\.\dms id=abc-1 addr=-$/)
  })

  it('json: one object per request, with the route template for the path and the interface it belongs to', async () => {
    const [line] = await logged('json', '/balance/user_id/123/summary', {headers: {'x-request-id': 'abc-1'}})
    expect(JSON.parse(line!)).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: 'info',
      msg: 'request',
      request_id: 'abc-1',
      interface: 'C',
      route: '/balance/:key/:id/summary',
      method: 'GET',
      status: 401,
      duration_ms: expect.any(Number),
      address: null,
    })
    // No id of the path reaches the line.
    expect(line).not.toContain('123')
  })

  it.each([
    ['GET', '/healthz', null, '/healthz', 200],
    ['GET', '/livez', null, '/livez', 200],
    ['GET', '/readyz', null, '/readyz', 200],
    ['POST', '/balance/user_id/7/withdrawals', 'C', '/balance/:key/:id/withdrawals', 401],
    ['PUT', '/balance/user_id/7/withdrawals', 'C', '/balance/:key/:id/withdrawals', 401],
    ['PUT', '/oauth/token', 'A', '/oauth/token', 405],
    ['GET', '/balance/no/such/thing/here', 'C', null, 401],
    ['GET', '/oauth/token/info', 'A', '/oauth/token/info', 401],
    ['GET', '/user/oauth/user/info', 'A', '/user/oauth/user/info', 401],
    ['GET', '/oauth/authorize?client_id=nobody', 'A', '/oauth/authorize', 400],
    ['GET', '/.well-known/openid-configuration', 'A', '/.well-known/openid-configuration', 200],
    ['GET', '/projects/5f0c/export', 'D', '/projects/:projectId/export', 401],
    ['GET', '/clients/info', 'D', '/clients/info', 401],
    ['GET', '/conversations/summary', 'E', '/conversations/summary', 401],
    ['GET', '/nowhere/42', null, null, 404],
  ])('json: %s %s is interface %s, route %s', async (method, path, iface, route, status) => {
    const [line] = await logged('json', path, {method})
    expect(JSON.parse(line!)).toMatchObject({interface: iface, route, method, status, level: 'info'})
  })

  it('a 500 is level error, and its error line carries the same request id, in both formats', async () => {
    const broken = {} as Store['db']
    const json = await logged('json', '/healthz', {headers: {'x-request-id': 'boom-1'}}, broken)
    const [error, access] = json.map((line) => JSON.parse(line))
    expect(access).toMatchObject({level: 'error', msg: 'request', request_id: 'boom-1', route: '/healthz', status: 500})
    expect(error).toMatchObject({level: 'error', msg: 'request failed', request_id: 'boom-1', route: '/healthz', method: 'GET', path: '/healthz'})
    expect(error.error).toMatch(/TypeError/)
    const text = await logged('text', '/healthz', {headers: {'x-request-id': 'boom-1'}}, broken)
    expect(text[0]).toMatch(/^error id=boom-1 GET \/healthz: TypeError/)
    expect(text[1]).toMatch(/ GET \/healthz 500 .* id=boom-1 addr=-$/)
  })

  it('a client that failed to authenticate gets a warn line with the reason its answer leaves out, kept on one line, without the secret', async () => {
    const body = new URLSearchParams({grant_type: 'client_credentials', client_id: 'nobody\nforged line', client_secret: 'not-the-secret'})
    const init = {method: 'POST', body, headers: {'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'who-1'}}
    const json = (await logged('json', '/oauth/token', init)).map((line) => JSON.parse(line))
    expect(json[0]).toEqual({
      time: expect.any(String),
      level: 'warn',
      msg: 'request refused',
      request_id: 'who-1',
      interface: 'A',
      route: '/oauth/token',
      method: 'POST',
      error: 'invalid_client',
      client_id: 'nobody\\u000aforged line',
      reason: 'unknown client or wrong secret',
    })
    expect(json[1]).toMatchObject({msg: 'request', request_id: 'who-1', status: 401})
    const text = await logged('text', '/oauth/token', {...init, body: new URLSearchParams(body)})
    expect(text[0]).toBe('refused id=who-1 POST /oauth/token invalid_client client_id=nobody\\u000aforged line: unknown client or wrong secret')
    expect(text.join('\n')).not.toContain('not-the-secret')
  })

  describe('the reference partner', () => {
    let partnerStore: ReceiverStore
    beforeAll(async () => {
      partnerStore = await openReceiverStore(':memory:')
    })
    afterAll(async () => partnerStore.close())

    it("logs the X-Request-Id a delivery brings as its own request id: medpanel's and the partner's lines share it", async () => {
      const auth = {authorization: basicAuth('medpanel', 'pw'), 'x-request-id': 'push-run-7'}
      for (const format of ['text', 'json'] as const) {
        const lines: string[] = []
        const app = receiverApp({db: partnerStore.db, username: 'medpanel', password: 'pw', clock, log: (line) => lines.push(line), logFormat: format})
        const res = await app.request('/v1/projects/P1', {headers: auth})
        expect(res.headers.get('x-request-id')).toBe('push-run-7')
        if (format === 'text') expect(lines).toEqual([expect.stringMatching(/ GET \/v1\/projects\/P1 404 [\d.]+ms id=push-run-7 addr=-$/)])
        else expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({request_id: 'push-run-7', interface: 'B', route: '/v1/projects/:p', status: 404})])
      }
    })
  })
})
