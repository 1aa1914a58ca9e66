import {request} from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, startCli, tempDir, type RunningCli} from '../helpers/cli.js'

/**
 * The issuer and the Host check through a real `serve` on a loopback port. `fetch` will not send a
 * Host of our choosing, so requests go through node:http, which sends the header as given.
 */
interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

function send(url: string, host: string | undefined, init: {method?: string; path?: string; body?: string} = {}): Promise<Answer> {
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    if (host !== undefined) headers.host = host
    if (init.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
    const req = request({host: target.hostname, port: target.port, method: init.method ?? 'GET', path: init.path ?? '/', headers, setHost: host === undefined}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({status: res.statusCode!, headers: res.headers, body}))
    })
    req.once('error', reject)
    req.end(init.body)
  })
}

const METADATA = '/.well-known/oauth-authorization-server'

describe('serve without --base-url: the listening address is the issuer, other hosts get 421', () => {
  let server: RunningCli
  let port: string
  let redirect: string
  beforeAll(async () => {
    // The demo client is registered with the listening address's /demo/callback as its redirect.
    server = await startCli(['serve', '--demo', '--no-worker', '--port', '0', '--db', join(tempDir(), 'hosts.db')])
    port = new URL(server.url).port
    redirect = `${server.url}/demo/callback`
  })
  afterAll(async () => server?.stop())

  it('answers a request for another host 421 with a short JSON message, not cacheable, and serves nothing (but the probes)', async () => {
    for (const path of [METADATA, '/', `/oauth/authorize?${new URLSearchParams({client_id: 'demo-client', redirect_uri: redirect, response_type: 'code', state: 's'})}`]) {
      const res = await send(server.url, 'evil.example', {path})
      expect(res.status, path).toBe(421)
      expect(res.headers['content-type']).toBe('application/json')
      expect(res.headers['cache-control']).toBe('no-store')
      expect(JSON.parse(res.body)).toEqual({message: 'this service does not answer for the host "evil.example"; an operator adds names with serve --allowed-host'})
      expect(res.body).not.toContain('issuer')
    }
    // The same name with the service's own port, or the listening address on another port, is no better.
    expect((await send(server.url, `evil.example:${port}`, {path: METADATA})).status).toBe(421)
    expect((await send(server.url, '127.0.0.1:1', {path: METADATA})).status).toBe(421)
    // A proxy-style absolute request target names the host instead of Host; it is checked the same.
    expect((await send(server.url, `127.0.0.1:${port}`, {path: `http://evil.example${METADATA}`})).status).toBe(421)
    // A POST is refused before its body is looked at.
    const token = await send(server.url, 'evil.example', {method: 'POST', path: '/oauth/token', body: 'grant_type=client_credentials'})
    expect(token.status).toBe(421)
    expect(server.stderr()).toMatch(/GET \/\.well-known\/oauth-authorization-server 421 /)
    // The probes answer whatever the Host (a load balancer or an orchestrator probing by IP
    // address): they name no address.
    for (const host of ['10.0.0.7', 'evil.example:8080']) {
      for (const [path, status] of [
        ['/healthz', 'ok'],
        ['/readyz', 'ok'],
        ['/livez', 'alive'],
      ]) {
        const res = await send(server.url, host, {path})
        expect(res.status, `${host} ${path}`).toBe(200)
        expect(JSON.parse(res.body)).toMatchObject({status})
      }
    }
  })

  it('names the listening address as issuer, whichever loopback name the request used', async () => {
    const issuer = `http://127.0.0.1:${port}`
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const res = await send(server.url, host, {path: METADATA})
      expect(res.status, host).toBe(200)
      expect(res.headers['cache-control']).toBe('public, max-age=3600')
      const metadata = JSON.parse(res.body) as {issuer: string; token_endpoint: string}
      expect(metadata.issuer, host).toBe(issuer)
      expect(metadata.token_endpoint).toBe(`${issuer}/oauth/token`)
    }
  })

  it("puts the real issuer in an authorize error redirect's iss, whatever loopback name was asked", async () => {
    const query = new URLSearchParams({client_id: 'demo-client', redirect_uri: redirect, response_type: 'code', state: 's', scope: 'everything'})
    const res = await send(server.url, `localhost:${port}`, {path: `/oauth/authorize?${query}`})
    expect(res.status).toBe(302)
    const location = new URL(res.headers.location as string)
    expect(location.origin + location.pathname).toBe(redirect)
    expect(location.searchParams.get('error')).toBe('invalid_scope')
    expect(location.searchParams.get('iss')).toBe(`http://127.0.0.1:${port}`)
  })

  it('writes the listening address into the home page, whatever loopback name was asked', async () => {
    const home = await send(server.url, `localhost:${port}`)
    expect(home.status).toBe(200)
    expect(home.body).toContain(`curl -s -u demo-client:demo-client-secret http://127.0.0.1:${port}/balance/user_id/1/summary`)
    expect(home.body).not.toContain('localhost')
  })
})

describe('serve --base-url and --allowed-host', () => {
  let server: RunningCli
  let port: string
  const base = 'https://panel.example.com'
  beforeAll(async () => {
    server = await startCli([
      'serve',
      '--no-worker',
      '--port',
      '0',
      '--base-url',
      base,
      '--allowed-host',
      'panel.internal,.svc.example',
      '--allowed-host',
      'gateway:8443',
      '--db',
      join(tempDir(), 'base.db'),
    ])
    port = new URL(server.url).port
  })
  afterAll(async () => server?.stop())

  it('names the base URL in the metadata whichever allowed name was asked, and answers 421 to the rest', async () => {
    const allowed = [
      'panel.example.com',
      'panel.example.com:443',
      'PANEL.EXAMPLE.COM',
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      'panel.internal',
      'panel.internal:9000',
      'svc.example',
      'a.b.svc.example:80',
      'gateway:8443',
    ]
    for (const host of allowed) {
      const res = await send(server.url, host, {path: METADATA})
      expect(res.status, host).toBe(200)
      expect((JSON.parse(res.body) as {issuer: string}).issuer, host).toBe(base)
    }
    const refused = [
      'evil.example',
      'panel.example.com.evil.example',
      'evilpanel.example.com',
      'x.panel.internal',
      'svc.example.evil',
      'gateway',
      'gateway:8444',
      `0.0.0.0:${port}`,
    ]
    for (const host of refused) expect((await send(server.url, host, {path: METADATA})).status, host).toBe(421)
    // An absolute request target with user:password@ in front of the host is not fooled by it.
    for (const target of [`http://panel.example.com:1@evil.example${METADATA}`, `http://user@panel.example.com${METADATA}`]) {
      expect((await send(server.url, 'panel.example.com', {path: target})).status, target).toBe(421)
    }
  })
})

describe('MEDPANEL_ALLOWED_HOSTS', () => {
  it('adds names as --allowed-host does, separated by commas or spaces', async () => {
    const server = await startCli(['serve', '--no-worker', '--port', '0', '--db', join(tempDir(), 'env.db')], {MEDPANEL_ALLOWED_HOSTS: 'panel.internal, .svc.example'})
    try {
      for (const host of ['panel.internal', 'a.svc.example']) {
        const res = await send(server.url, host, {path: METADATA})
        expect(res.status, host).toBe(200)
        expect((JSON.parse(res.body) as {issuer: string}).issuer).toBe(server.url)
      }
      expect((await send(server.url, 'evil.example', {path: METADATA})).status).toBe(421)
    } finally {
      await server.stop()
    }
  })
})

describe('serve refuses, with one Error line, before listening', () => {
  it('an every-address --host without --base-url: such an address is no issuer', () => {
    for (const host of ['0.0.0.0', '::']) {
      const result = cli(['serve', '--no-worker', '--port', '0', '--host', host, '--db', join(tempDir(), 'wild.db')])
      expect(result.status, host).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        `Error: --host ${host} listens on every address and names none of them: give --base-url (or MEDPANEL_BASE_URL), the address clients use (e.g. https://panel.example.com)`,
      ])
    }
  })

  it('an --allowed-host that is no host name', () => {
    for (const bad of ['evil.example/path', 'user@evil.example', '::1', 'a.example:99999', 'http://a.example']) {
      const result = cli(['serve', '--no-worker', '--port', '0', '--allowed-host', bad, '--db', join(tempDir(), 'bad.db')])
      expect(result.status, bad).toBe(1)
      expect(result.stderr.trim().split('\n'), bad).toEqual([expect.stringMatching(/^Error: --allowed-host takes a host name or address with an optional :PORT .*\(got ".+"\)$/)])
    }
  })
})
