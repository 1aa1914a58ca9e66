import {createHash} from 'node:crypto'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, type RunningCli, startCli} from '../helpers/cli.js'
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'
import {type TcpProxy, tcpProxy} from '../helpers/tcp-proxy.js'
import {basicAuth} from '../helpers/http-basic.js'
import {scaledBound, timeOf} from '../helpers/timing.js'

/*
 * The caches of three `serve` processes on one PostgreSQL database (src/store/postgres/listen.ts):
 * what one process (or a command) changes, the others stop serving from memory within
 * milliseconds, and a process whose listening connection is lost serves nothing from memory until
 * it listens again. Each figure measured is printed. The first process listens through a relay
 * the test can cut (--listen-url), so its listening connection can be lost while its requests
 * go on reaching the database.
 */
describe.skipIf(!onPostgres)('caches of three serve processes on one PostgreSQL database', () => {
  let url: string
  let store: string[]
  let servers: RunningCli[] = []
  let admin: pg.Client
  /** Between the first process's listener and the database. */
  let relay: TcpProxy
  let client: {client_id: string; client_secret: string}
  const basic = (secret = client.client_secret) => basicAuth(client.client_id, secret)
  const issue = () => cliJson<{access_token: string}>(['issue-token', ...store, '--member', '1', '--client', client.client_id]).access_token
  const hashOf = (token: string) => createHash('sha256').update(token).digest('hex')
  /** Revokes a token in the database directly: announced only while the table's trigger is on. */
  const revoke = (token: string) => admin.query('update access_tokens set revoked_at = $1 where token_hash = $2', [new Date().toISOString(), hashOf(token)])
  const info = async (server: RunningCli, token: string) => {
    const res = await fetch(`${server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})
    await res.arrayBuffer()
    return res.status
  }
  /** Every server answers the token twice with 200: read once, then (where caching is on) from memory. */
  const useEverywhere = async (token: string) => {
    for (const server of servers) for (let i = 0; i < 2; i++) expect(await info(server, token)).toBe(200)
  }
  /**
   * Milliseconds until `check` holds for every one of `among`, polling, with the polls that found
   * it not yet so (answers still served from memory); fails past a generous bound.
   */
  const untilAll = async (among: RunningCli[], check: (server: RunningCli) => Promise<boolean>, limitMs = 10_000) => {
    const started = performance.now()
    const pending = new Set(among)
    let stale = 0
    while (pending.size > 0) {
      for (const server of [...pending]) {
        if (await check(server)) pending.delete(server)
        else stale++
      }
      if (performance.now() - started > limitMs) throw new Error(`still not after ${limitMs} ms`)
    }
    return {ms: performance.now() - started, stale, label: `${(performance.now() - started).toFixed(1)} ms (${stale} polls still answered from memory)`}
  }
  const listenerPids = async () =>
    (await admin.query(`select pid, application_name from pg_stat_activity where datname = current_database() and application_name like 'medpanel-listen %'`)).rows as {
      pid: number
      application_name: string
    }[]
  const listenerOf = async (server: RunningCli) => (await listenerPids()).find((row) => row.application_name === `medpanel-listen ${server.child.pid}`)

  beforeAll(async () => {
    url = await freshDatabaseUrl()
    store = ['--database-url', url]
    client = cliJson([
      'register-client',
      ...store,
      '--name',
      'Cache Co',
      '--url',
      'https://cache.example',
      '--logo-url',
      'https://cache.example/logo.png',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--grant',
      'signon,balance',
    ])
    cliJson([
      'add-member',
      ...store,
      '--email',
      'cache.doctor@clinic.example',
      '--password',
      'a long enough password',
      '--first-name',
      'Kim',
      '--last-name',
      'Ode',
      '--country',
      'US',
      '--specialty',
      'Oncology',
      '--npi',
      '1234567893',
    ])
    const direct = new URL(url)
    relay = await tcpProxy(Number(direct.port || 5432), direct.hostname)
    const relayed = new URL(url)
    relayed.hostname = '127.0.0.1'
    relayed.port = String(relay.port)
    servers = await Promise.all([['--listen-url', relayed.href], [], []].map((listen) => startCli(['serve', ...store, ...listen, '--port', '0'])))
    admin = new pg.Client({connectionString: url})
    await admin.connect()
    // Each process listens (its cache is on) before the tests rely on it.
    const started = performance.now()
    while ((await listenerPids()).length < 3) {
      if (performance.now() - started > 20_000) throw new Error('the three listeners did not start')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })

  afterAll(async () => {
    await admin?.end()
    await Promise.all(servers.map((running) => running.stop('SIGTERM')))
    await relay?.close()
  })

  it('a token revoked through one process (RFC 7009) is refused by it at once and by the others within milliseconds', async () => {
    const token = issue()
    await useEverywhere(token)
    const res = await fetch(`${servers[0]!.url}/oauth/revoke`, {
      method: 'POST',
      headers: {authorization: basic(), 'content-type': 'application/x-www-form-urlencoded'},
      body: new URLSearchParams({token}),
    })
    expect(res.status).toBe(200)
    // One request to the revoking process, timed: the others may take many of them on a busy machine.
    const request = await timeOf(async () => expect(await info(servers[0]!, token)).toBe(401))
    const {ms, label} = await untilAll(servers.slice(1), async (server) => (await info(server, token)) === 401)
    console.log(`revoked token refused by the other two processes after ${label}`)
    expect(ms).toBeLessThan(scaledBound(2_000, request))
  })

  it("a client's rotated secret is refused by every process within milliseconds of the command", async () => {
    const summary = (server: RunningCli, secret?: string) =>
      fetch(`${server.url}/balance/user_id/1/summary`, {headers: {authorization: basic(secret)}}).then(async (res) => {
        await res.arrayBuffer()
        return res.status
      })
    for (const server of servers) for (let i = 0; i < 2; i++) expect(await summary(server)).toBe(200)
    const request = await timeOf(async () => expect(await summary(servers[0]!)).toBe(200))
    const old = client.client_secret
    const rotated = cliJson<{client_secret: string}>(['rotate-client-secret', ...store, client.client_id])
    const {ms, label} = await untilAll(servers, async (server) => (await summary(server, old)) === 401)
    console.log(`old client secret refused by all three processes ${label} after the command returned`)
    expect(ms).toBeLessThan(scaledBound(2_000, request))
    client.client_secret = rotated.client_secret
    for (const server of servers) expect(await summary(server)).toBe(200)
  })

  it('a process whose listener is cut off serves nothing from memory until it listens again, then caches again', async () => {
    const [down, ...up] = servers as [RunningCli, ...RunningCli[]]
    const token = issue()
    // Read by the process only while its listener is down.
    const spare = issue()
    await useEverywhere(token)
    // Changes made from here on are not announced, so only a process that re-reads sees them.
    await admin.query('alter table access_tokens disable trigger access_tokens_cache_update')
    try {
      expect(await listenerOf(down)).toBeDefined()
      // The listener's connection is reset, and it cannot reconnect while the relay is cut; the
      // process's request connections go straight to the database and are untouched.
      relay.cut()
      try {
        const started = performance.now()
        while (await listenerOf(down)) {
          if (performance.now() - started > 10_000) throw new Error('the listener was not cut off')
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        // Read while the listener is down: it must not be kept.
        expect(await info(down, spare)).toBe(200)
        for (const revoked of [token, spare]) await revoke(revoked)
        // The process without its listener reads both tokens again and refuses them...
        expect(await info(down, spare)).toBe(401)
        expect(await info(down, token)).toBe(401)
        // ...while the two still listening serve it from memory: nothing told them (the trigger is off).
        for (const server of up) expect(await info(server, token)).toBe(200)
      } finally {
        relay.restore()
      }
      const back = performance.now()
      while (!(await listenerOf(down))) {
        if (performance.now() - back > 30_000) throw new Error('the listener did not come back')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      console.log(`listener back ${(performance.now() - back).toFixed(0)} ms after the relay was restored`)
      // Caching resumes once the listener has also heard its probe through the store (a few
      // milliseconds after it is back): from then on a token it reads is served from memory even
      // after an unannounced revocation.
      const resumed = performance.now()
      let later = issue()
      for (;;) {
        expect(await info(down, later)).toBe(200)
        await revoke(later)
        if ((await info(down, later)) === 200) break
        if (performance.now() - resumed > 30_000) throw new Error('caching did not resume')
        later = issue()
      }
      await admin.query(`select pg_notify('medpanel_cache', 'test')`)
      await untilAll([down], async (server) => (await info(server, later)) === 401)
    } finally {
      await admin.query('alter table access_tokens enable trigger access_tokens_cache_update')
    }
    // A notification drops what it served from memory.
    await admin.query(`select pg_notify('medpanel_cache', 'test')`)
    await untilAll(servers, async (server) => (await info(server, token)) === 401)
  })

  it('a member deactivated by a command is refused by every process within milliseconds', async () => {
    const token = issue()
    await useEverywhere(token)
    const request = await timeOf(async () => expect(await info(servers[0]!, token)).toBe(200))
    cliJson(['update-member', ...store, '1', '--deactivate'])
    const {ms, label} = await untilAll(servers, async (server) => (await info(server, token)) === 401)
    console.log(`deactivated member's token refused by all three processes ${label} after the command returned`)
    expect(ms).toBeLessThan(scaledBound(2_000, request))
  })
})
