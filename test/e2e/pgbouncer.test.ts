import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {chownSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, freePort, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'
import {freshDatabaseUrl, onPostgres} from '../helpers/store.js'
import {clientBasic} from '../helpers/http-basic.js'

/*
 * PgBouncer in transaction pooling mode between medpanel and PostgreSQL, as many operators run
 * it: each transaction gets whichever server connection is free, so nothing may rely on a
 * session outliving its transaction (session settings, session advisory locks, protocol-level
 * prepared statements unless PgBouncer tracks them, LISTEN). `serve` and the CLI run through it
 * with the flags they have without it, and each interface that writes is driven through it.
 *
 * LISTEN/NOTIFY needs a session of its own: a LISTEN sent through transaction pooling is lost
 * when its transaction ends. A process that relies on notifications to drop cached rows must
 * therefore reach PostgreSQL directly for that one connection; this test runs serve with only
 * the PgBouncer URL, so a cache that waits for notifications would serve stale rows here and the
 * revocation check below would catch it.
 *
 * PgBouncer tracks protocol-level named prepared statements from version 1.21
 * (max_prepared_statements); older versions (Debian 12 ships 1.18) pass them through to
 * whichever server connection comes next, where they are missing or already defined.
 */
describe.skipIf(!onPostgres)('serve and the CLI through PgBouncer (transaction pooling)', () => {
  const dir = tempDir('medpanel-pgbouncer-')
  let bouncer: ChildProcess | undefined
  let url: string
  /** The same database, reached without PgBouncer. */
  let directUrl: string
  let store: string[]
  let server: RunningCli | undefined
  let client: {client_id: string; client_secret: string}
  let memberId: number
  const member = {email: 'pool.doctor@clinic.example', password: 'a long enough password'}
  const basic = () => clientBasic(client)

  beforeAll(async () => {
    const binary = ['pgbouncer', '/usr/sbin/pgbouncer'].find((candidate) => spawnSync(candidate, ['--version']).status === 0)
    if (!binary) throw new Error("pgbouncer is not installed: this test needs Debian's `pgbouncer` package (apt-get install pgbouncer; .ci/run installs it)")
    const version = /PgBouncer (\d+)\.(\d+)/.exec(spawnSync(binary, ['--version'], {encoding: 'utf8'}).stdout)
    const tracksPrepared = version !== null && (Number(version[1]) > 1 || Number(version[2]) >= 21)

    const direct = new URL(await freshDatabaseUrl())
    directUrl = direct.toString()
    const port = await freePort()
    const user = decodeURIComponent(direct.username)
    writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`)
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${direct.hostname} port=${direct.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        `unix_socket_dir = ${dir}`,
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'pool_mode = transaction',
        // Fewer server connections than serve's pool (10): transactions of different client
        // connections must share them, which is what transaction pooling is about.
        'default_pool_size = 3',
        'max_client_conn = 200',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        `pidfile = ${join(dir, 'pgbouncer.pid')}`,
        ...(tracksPrepared ? ['max_prepared_statements = 200'] : []),
      ].join('\n'),
    )
    // PgBouncer refuses to run as root; under root it runs as Debian's postgres user.
    const root = process.getuid?.() === 0
    if (root) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], {encoding: 'utf8'}).stdout.trim())
      const gid = Number(spawnSync('id', ['-g', 'postgres'], {encoding: 'utf8'}).stdout.trim())
      for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, gid)
    }
    const command = root ? ['runuser', '-u', 'postgres', '--', binary] : [binary]
    bouncer = spawn(command[0]!, [...command.slice(1), join(dir, 'pgbouncer.ini')], {stdio: 'ignore'})
    const pooled = new URL(direct)
    pooled.port = String(port)
    url = pooled.toString()
    // Ready once a query gets through it.
    for (let i = 0; ; i++) {
      if (spawnSync('psql', [url, '-Atc', 'select 1'], {encoding: 'utf8'}).stdout.trim() === '1') break
      if (i > 100) throw new Error(`pgbouncer did not start: ${existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : 'no log'}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    store = ['--database-url', url]

    // The CLI through PgBouncer: it migrates the database, registers a client and adds a member.
    client = cliJson([
      'register-client',
      ...store,
      '--name',
      'Pool Co',
      '--url',
      'https://pool.example',
      '--logo-url',
      'https://pool.example/logo.png',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--grant',
      'signon,balance,conversations',
    ])
    memberId = cliJson<{user_id: number}>([
      'add-member',
      ...store,
      '--email',
      member.email,
      '--password',
      member.password,
      '--first-name',
      'Pat',
      '--last-name',
      'Pool',
      '--country',
      'US',
      '--specialty',
      'Oncology',
      '--npi',
      '1234567893',
    ]).user_id
    server = await startCli(['serve', ...store, '--port', '0'])
  })

  afterAll(async () => {
    await server?.stop('SIGTERM')
    const pidFile = join(dir, 'pgbouncer.pid')
    if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM')
    bouncer?.kill('SIGTERM')
  })

  it('the CLI migrates, registers a client and lists it back through the pool', () => {
    const clients = cliJson<{client_id: string}[]>(['list-clients', ...store])
    expect(clients.map((c) => c.client_id)).toContain(client.client_id)
  })

  it('signs a member on, answers token info, and refuses the token once revoked', async () => {
    const authorize = new URL(`${server!.url}/oauth/authorize`)
    authorize.search = new URLSearchParams({client_id: client.client_id, redirect_uri: 'http://127.0.0.1/callback', response_type: 'code', state: 's'}).toString()
    const back = await consentInBrowser(server!.url, authorize, member)
    const exchanged = await fetch(`${server!.url}/oauth/token`, {
      method: 'POST',
      headers: {authorization: basic(), 'content-type': 'application/x-www-form-urlencoded'},
      body: new URLSearchParams({grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: 'http://127.0.0.1/callback'}),
    })
    expect(exchanged.status).toBe(200)
    const {access_token: token} = (await exchanged.json()) as {access_token: string}
    // Many checks at once: they spread over serve's pool and PgBouncer's three server connections.
    const infos = await Promise.all(Array.from({length: 30}, () => fetch(`${server!.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})))
    expect(infos.map((r) => r.status)).toEqual(Array(30).fill(200))
    expect(((await infos[0]!.json()) as {resource_owner_id: number}).resource_owner_id).toBe(memberId)

    const revoked = await fetch(`${server!.url}/oauth/revoke`, {
      method: 'POST',
      headers: {authorization: basic(), 'content-type': 'application/x-www-form-urlencoded'},
      body: new URLSearchParams({token}),
    })
    expect(revoked.status).toBe(200)
    const after = await Promise.all(Array.from({length: 10}, () => fetch(`${server!.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})))
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(401))
    // A token issued by the CLI through the pool works too.
    const {access_token: cliToken} = cliJson<{access_token: string}>(['issue-token', ...store, '--member', String(memberId), '--client', client.client_id])
    expect((await fetch(`${server!.url}/oauth/token/info`, {headers: {authorization: `Bearer ${cliToken}`}})).status).toBe(200)
  })

  it('takes a withdrawal once for a replayed Idempotency-Key, and concurrent ones to the exact balance', async () => {
    expect(cli(['credit', 'user_id', String(memberId), '--amount', '30.00', '--type', 'INCENTIVE', ...store]).status).toBe(0)
    const withdraw = (amount: number, key?: string) =>
      fetch(`${server!.url}/balance/user_id/${memberId}/withdrawals`, {
        method: 'POST',
        headers: {authorization: basic(), 'content-type': 'application/json', ...(key ? {'idempotency-key': key} : {})},
        body: JSON.stringify({type: 'CHARITY', amount, member_details: {first_name: 'Pat', last_name: 'Pool', email: 'pat@example.com'}}),
      }).then(async (res) => ({status: res.status, body: (await res.json()) as {transaction_id?: string}}))
    const first = await withdraw(5, 'pool-key-1')
    const replay = await withdraw(5, 'pool-key-1')
    expect(first.status).toBe(201)
    expect(replay.status).toBe(201)
    expect(replay.body.transaction_id).toBe(first.body.transaction_id)
    // 25.00 left: 40 withdrawals of 1.00 at once take 25 and refuse 15, none fails.
    const statuses = (await Promise.all(Array.from({length: 40}, () => withdraw(1)))).map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(25)
    expect(statuses.filter((s) => s === 422)).toHaveLength(15)
    const summary = await fetch(`${server!.url}/balance/user_id/${memberId}/summary`, {headers: {authorization: basic()}})
    expect(await summary.text()).toContain('"available_funds":0,')
    const ledger = cliJson<{type: string}[]>(['list-transactions', '--limit', '100000', 'user_id', String(memberId), ...store])
    expect(ledger.filter((t) => t.type === 'WITHDRAWAL')).toHaveLength(26)
  })

  it('answers a conversation search over posts the CLI seeded through the pool', async () => {
    cliJson(['seed-posts', ...store, '--count', '300', '--comments', '2', '--from', '2024-01-01T00:00:00Z', '--to', '2024-12-31T23:59:59Z', '--seed', '3'])
    const {api_key: key} = cliJson<{api_key: string}>(['issue-api-key', client.client_id, ...store, '--methods', 'summary'])
    const params = new URLSearchParams({start: '2024-01-01T00:00:00Z', end: '2024-12-31T23:59:59Z'})
    params.append('terms[]', 'a')
    const res = await fetch(`${server!.url}/conversations/summary?${params}`, {headers: {accept: 'application/vnd.service-v1+json', 'x-service-conversation-api-key': key}})
    const body = (await res.json()) as {summary: {uniques: {posts: number; comments: number}}}
    expect(res.status, JSON.stringify(body)).toBe(200)
    expect(body.summary.uniques.posts).toBeGreaterThan(0)
  })

  /** This serve's caches gauge: 1 while its listener hears the store's changes. */
  const cachesOn = async (base: string) => {
    const text = await (await fetch(`${base}/metrics`)).text()
    return /^medpanel_store_pg_cache_listening (\d)/m.exec(text)?.[1]
  }
  const waitFor = async (what: string, probe: () => Promise<boolean>, limitMs = 20_000) => {
    const started = Date.now()
    while (!(await probe())) {
      if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('keeps the caches off behind the pooler, and on with --listen-url reaching the database directly', async () => {
    expect(await cachesOn(server!.url)).toBe('0')
    const direct = await startCli(['serve', ...store, '--port', '0', '--listen-url', directUrl])
    try {
      await waitFor('the direct listener to hear the store', async () => (await cachesOn(direct.url)) === '1')
      const {access_token: token} = cliJson<{access_token: string}>(['issue-token', ...store, '--member', String(memberId), '--client', client.client_id])
      const info = () => fetch(`${direct.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}}).then((r) => r.status)
      expect(await info()).toBe(200)
      expect(await info()).toBe(200)
      // Revoked through the other serve (and so through the pool): the cached token is refused at once.
      const revoked = await fetch(`${server!.url}/oauth/revoke`, {
        method: 'POST',
        headers: {authorization: basic(), 'content-type': 'application/x-www-form-urlencoded'},
        body: new URLSearchParams({token}),
      })
      expect(revoked.status).toBe(200)
      await waitFor('the revocation to be heard', async () => (await info()) === 401, 5_000)
    } finally {
      await direct.stop('SIGTERM')
    }
  })

  it('leaves the caches off when --listen-url does not hear the store (another database)', async () => {
    const other = new URL(directUrl)
    const name = `${other.pathname.slice(1)}_elsewhere`
    const admin = new URL(directUrl)
    admin.pathname = '/postgres'
    expect(spawnSync('psql', [admin.toString(), '-Atc', `create database ${name}`], {encoding: 'utf8'}).status).toBe(0)
    other.pathname = `/${name}`
    const elsewhere = await startCli(['serve', ...store, '--port', '0', '--listen-url', other.toString()])
    try {
      // The probe waits 5 s for its notification; well past that, the caches are still off.
      await new Promise((resolve) => setTimeout(resolve, 7_000))
      expect(await cachesOn(elsewhere.url)).toBe('0')
    } finally {
      await elsewhere.stop('SIGTERM')
      spawnSync('psql', [admin.toString(), '-Atc', `drop database if exists ${name}`])
    }
  })

  it('refuses --listen-url that is no PostgreSQL URL, or without a PostgreSQL store', () => {
    const bad = cli(['serve', ...store, '--port', '0', '--listen-url', 'mysql://x'])
    expect(bad.status).toBe(1)
    expect(bad.stderr.trim()).toBe('Error: --listen-url (or MEDPANEL_LISTEN_URL) must be a postgres:// URL')
    const sqlite = cli(['serve', '--database-url', `sqlite:${join(dir, 'x.db')}`, '--port', '0', '--listen-url', directUrl])
    expect(sqlite.status).toBe(1)
    expect(sqlite.stderr.trim()).toBe('Error: --listen-url (or MEDPANEL_LISTEN_URL) applies to a PostgreSQL store: give --database-url postgres://… too')
  })
})
