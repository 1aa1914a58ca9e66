import {request as httpRequest} from 'node:http'
import {networkInterfaces} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, partnerRegistration, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {onPostgres, storeFlags} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

/*
 * /metrics of a real `serve` on loopback, asked from several local addresses: 127.0.0.x are all
 * loopback; 127.0.0.2 plays a reverse proxy named by --trust-proxy; and, where this machine has
 * one, an address of a real network interface is a caller that is not on loopback (the kernel
 * delivers its packets to 127.0.0.1 over lo, but the server sees that address as the peer).
 */

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One GET from the local address `from`. */
function get(base: string, from: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(path, base)
  return new Promise((resolve, reject) => {
    const req = httpRequest({host: url.hostname, port: url.port, path: url.pathname, method: 'GET', localAddress: from, headers, agent: false}, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({status: res.statusCode ?? 0, headers: res.headers, body: text}))
    })
    req.on('error', reject)
    req.end()
  })
}

/** An IPv4 address of this machine that is not loopback, if it has one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address

const TOKEN = 'e2e-metrics-token-5c1d0e2f9a8b7c6d'

describe('/metrics of a real serve', () => {
  const dir = tempDir('medpanel-metrics-e2e-')
  let store: string[]
  let open: RunningCli
  let tokened: RunningCli

  beforeAll(async () => {
    store = storeFlags(join(dir, 'metrics.db'))
    open = await startCli(['serve', ...store, '--port', '0', '--demo', '--no-worker', '--trust-proxy', '127.0.0.2'])
    tokened = await startCli(['serve', ...store, '--port', '0', '--no-worker'], {MEDPANEL_METRICS_TOKEN: TOKEN})
  })
  afterAll(async () => {
    await open?.stop()
    await tokened?.stop()
  })

  it('answers callers on loopback with the Prometheus text of that process', async () => {
    await get(open.url, '127.0.0.1', '/user/oauth/token/info')
    const res = await get(open.url, '127.0.0.1', '/metrics')
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(res.body).toContain('medpanel_http_requests_total{interface="A",route="/user/oauth/token/info",status_class="4xx"} 1\n')
    expect(res.body).toMatch(/^medpanel_process_cpu_seconds_total \d/m)
    expect(res.body).toMatch(/^medpanel_nodejs_heap_size_used_bytes \d/m)
    expect(res.body).toMatch(onPostgres ? /^medpanel_store_pg_pool_connections\{state="total"\} [1-9]/m : /^medpanel_store_sqlite_wal_bytes [1-9]/m)
    // An idle process has nothing waiting for a connection: the scrape's own queries are not counted.
    if (onPostgres) expect((await get(open.url, '127.0.0.1', '/metrics')).body).toMatch(/^medpanel_store_pg_pool_connections\{state="waiting"\} 0$/m)
    // Any loopback address is this machine.
    expect((await get(open.url, '127.0.0.3', '/metrics')).status).toBe(200)
  })

  it('refuses what only looks local: a caller the trusted proxy relays, forwarding headers from anyone else', async () => {
    const refused = {message: '/metrics answers only callers on this machine (loopback); to scrape it from elsewhere, start serve with --metrics-token'}
    // Through the proxy (127.0.0.2, --trust-proxy) for a caller elsewhere.
    const relayed = await get(open.url, '127.0.0.2', '/metrics', {'x-forwarded-for': '203.0.113.7'})
    expect(relayed.status).toBe(403)
    expect(JSON.parse(relayed.body)).toEqual(refused)
    // A caller that put loopback in its own header, relayed by the proxy, which adds its real address.
    expect((await get(open.url, '127.0.0.2', '/metrics', {'x-forwarded-for': '127.0.0.1, 203.0.113.7'})).status).toBe(403)
    // The proxy relaying a caller on this machine, and the proxy's address itself: local.
    expect((await get(open.url, '127.0.0.2', '/metrics', {'x-forwarded-for': '127.0.0.1'})).status).toBe(200)
    expect((await get(open.url, '127.0.0.2', '/metrics')).status).toBe(200)
    // A peer that is no trusted proxy: its forwarding headers say a proxy nobody named relayed it.
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      expect((await get(open.url, '127.0.0.3', '/metrics', {[header]: header === 'forwarded' ? 'for=127.0.0.1' : '127.0.0.1'})).status, header).toBe(403)
    }
    // A peer that is not on loopback, whatever it claims.
    if (external !== undefined) {
      for (const headers of [{}, {'x-forwarded-for': '127.0.0.1'}] as Record<string, string>[]) {
        const res = await get(open.url, external, '/metrics', headers)
        expect(res.status, `${external} ${JSON.stringify(headers)}`).toBe(403)
        expect(JSON.parse(res.body)).toEqual(refused)
      }
    }
  })

  it('with --metrics-token (here from MEDPANEL_METRICS_TOKEN), answers the bearer of the token only, from anywhere', async () => {
    const missing = await get(tokened.url, '127.0.0.1', '/metrics')
    expect(missing.status).toBe(401)
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer realm="medpanel", error="invalid_request"/)
    expect(JSON.parse(missing.body)).toEqual({message: '/metrics needs the metrics token as a Bearer token'})
    const wrong = await get(tokened.url, '127.0.0.1', '/metrics', {authorization: `Bearer ${TOKEN}x`})
    expect(wrong.status).toBe(401)
    expect(wrong.headers['www-authenticate']).toMatch(/error="invalid_token"/)
    expect((await get(tokened.url, '127.0.0.1', '/metrics', {authorization: basicAuth('metrics', TOKEN)})).status).toBe(401)
    const right = await get(tokened.url, '127.0.0.1', '/metrics', {authorization: `Bearer ${TOKEN}`})
    expect(right.status).toBe(200)
    expect(right.body).toMatch(/^medpanel_store_migrations_applied [1-9]/m)
    if (external !== undefined) {
      expect((await get(tokened.url, external, '/metrics')).status).toBe(401)
      expect((await get(tokened.url, external, '/metrics', {authorization: `Bearer ${TOKEN}`})).status).toBe(200)
    }
  })

  it('refuses a token that is too short, and one with --no-metrics, before serving', () => {
    const short = cli(['serve', ...store, '--port', '0', '--metrics-token', 'short'])
    expect(short.status).toBe(1)
    expect(short.stderr).toContain('--metrics-token must be at least 16 characters')
    const off = cli(['serve', ...store, '--port', '0', '--no-metrics'], {MEDPANEL_METRICS_TOKEN: TOKEN})
    expect(off.status).toBe(1)
    expect(off.stderr).toContain('--metrics-token opens /metrics, which --no-metrics turns off')
  })
})

describe("a real serve's outbox worker", () => {
  const dir = tempDir('medpanel-metrics-worker-')
  let store: string[]
  let partner: RunningCli
  let serve: RunningCli

  beforeAll(async () => {
    store = storeFlags(join(dir, 'worker.db'))
    partner = await startCli(['partner-serve', '--port', '0', '--username', 'acme', '--password', 's3cret', '--db', join(dir, 'partner.db')])
    serve = await startCli(['serve', ...store, '--port', '0'])
  })
  afterAll(async () => {
    await serve?.stop()
    await partner?.stop()
  })

  it('counts the deliveries it sends in the /metrics of its process (compose hands it the registry)', async () => {
    const client = cliJson<{client_id: string}>([...partnerRegistration(store, partner.url), '--partner-username', 'acme', '--partner-password', 's3cret'])
    cliJson(['push-project', ...store, '--project-id', 'PM', '--name', 'Study PM', '--duration', '5', '--status', 'active', '--type', 'custom', '--partner', client.client_id])
    const delivered = /^medpanel_partner_delivery_attempts_total\{outcome="delivered"\} (\d+)$/m
    let body = ''
    for (let i = 0; i < 600; i++) {
      body = (await get(serve.url, '127.0.0.1', '/metrics')).body
      if (Number(delivered.exec(body)?.[1] ?? 0) >= 1) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(delivered.exec(body)?.[1]).toBe('1')
    expect(body).toMatch(/^medpanel_partner_delivery_attempts_total\{outcome="failed"\} 0$/m)
  })
})
