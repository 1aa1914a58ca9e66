import {issueToken} from '../../src/interfaces/signon/issue-token.js'
import {CompiledQuery, sql, type Migration} from 'kysely'
import {randomBytes, scryptSync} from 'node:crypto'
import {chmodSync, copyFileSync, existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {importJWK, type JWK, SignJWT} from 'jose'
import {afterEach, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {DeliveryWorker} from '../../src/interfaces/partner/worker.js'
import {ManualClock} from '../../src/lib/clock.js'
import {summarySql} from '../../src/interfaces/conversations/repository.js'
import type {SummaryRow} from '../../src/interfaces/conversations/search-types.js'
import {summarize} from '../../src/interfaces/conversations/views.js'
import {tokenizeTexts} from '../../src/store/fts-tokens.js'
import {needsRehash, verifyPassword} from '../../src/lib/hashing.js'
import {pageAudit, recordAudit} from '../../src/operator/audit.js'
import {listClients} from '../../src/registry/views.js'
import {openStore} from '../../src/schema.js'
import {openStore as openStoreWith, type Store} from '../../src/store/db.js'
import {tempDir} from '../helpers/cli.js'
import {CookieJar, csrfOf} from '../interfaces/signon/flow.js'
import {FakeTransport} from '../interfaces/partner/helpers.js'
import {form} from '../helpers/app.js'
import {openMemoryStore} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url))

function copyOwnersOnly(from: string, to: string): void {
  copyFileSync(from, to)
  chmodSync(to, 0o600)
}

interface Credentials {
  /** From 0.4.0 on: the ID-token signing keys the release made. */
  signing_kids?: string[]
  client_id: string
  client_secret: string
  partner_client_id: string
  partner_username: string
  partner_password: string
  signing_secret: string
  member_id: number
  member_email: string
  member_password: string
  access_token: string
  api_key: string
  withdrawal: {id: string}
  balance: {available_funds: number}
  transactions: {transactions: {id: string; amount: number; status: string}[]}
  row_counts: Record<string, number>
  /** From 0.6.0 on: a public client (no secret). */
  public_client_id?: string
  /** From 0.7.0 on: a private_key_jwt client that must push its requests, and its private key. */
  assertion_client_id?: string
  assertion_private_jwk?: JWK
  /** From 0.8.0 on: a client that takes only DPoP-bound tokens, with a back-channel logout URI. */
  dpop_client_id?: string
  /** From 0.9.0 on: the operators' audit trail of the script's commands, as list-audit --json printed it. */
  audit?: {id: number; command: string; target_kind: string; target: string; changes: Record<string, unknown>}[]
}

/** Every store an earlier release wrote, kept with its credentials (test/fixtures/make-store.sh). */
const releases = readdirSync(FIXTURES)
  .filter((name) => /^store-.+\.db$/.test(name))
  .map((name) => name.replace(/\.db$/, ''))

it('keeps a store of every release that changed the schema or how secrets are stored', () => {
  // Without them every check below would silently run for nothing.
  expect(releases).toEqual(
    expect.arrayContaining(['store-0.1.0', 'store-0.2.0', 'store-0.3.0', 'store-0.4.0', 'store-0.5.0', 'store-0.6.0', 'store-0.7.0', 'store-0.8.0', 'store-0.9.0', 'store-0.10.0']),
  )
})

describe.each(releases)('a store written by %s opens under this release with everything intact', (release) => {
  const credentials = JSON.parse(readFileSync(join(FIXTURES, `${release}.json`), 'utf8')) as Credentials
  let store: Store
  afterEach(async () => store?.close())

  /**
   * The fixture as this release's first open leaves it: copied (made the owner's only, as medpanel
   * makes its own: git checks the fixtures out 0644, and a store or key file others can read is
   * refused), opened once, which runs every migration since its release, and closed. Made on the
   * first test's call; each test then opens a copy of it, so the migrations run once per release
   * rather than once per test.
   */
  let migrated: Promise<string> | undefined
  function migratedOnce(): Promise<string> {
    migrated ??= (async () => {
      const file = join(tempDir(), 'migrated.db')
      copyOwnersOnly(join(FIXTURES, `${release}.db`), file)
      // From 0.2.0 on, partner credentials are sealed under the key kept beside the store.
      if (existsSync(join(FIXTURES, `${release}.db.key`))) copyOwnersOnly(join(FIXTURES, `${release}.db.key`), `${file}.key`)
      await (await openStore({file})).close()
      return file
    })()
    return migrated
  }

  async function upgraded(): Promise<{store: Store; app: ReturnType<typeof createApp>; clock: ManualClock}> {
    const template = await migratedOnce()
    const file = join(tempDir(), 'upgraded.db')
    // The key the first open made or kept, and any write-ahead log the close left.
    for (const suffix of ['', '.key', '-wal']) if (existsSync(`${template}${suffix}`)) copyOwnersOnly(`${template}${suffix}`, `${file}${suffix}`)
    store = await openStore({file})
    // Tokens are checked against the fixture's own time, so its one-year tokens are still live.
    const clock = new ManualClock(new Date('2026-11-25T00:00:00Z'))
    return {store, app: createApp({store, clock, log: () => undefined}), clock}
  }

  it.runIf(credentials.signing_kids !== undefined)('its ID-token signing keys are still published and still sign', async () => {
    const {app} = await upgraded()
    const jwks = (await (await app.request('/oauth/jwks')).json()) as {keys: {kid: string}[]}
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual([...credentials.signing_kids!].sort())
    // The private halves open under the store's key: the same keys sign the next ID tokens.
    const {signingKey} = await import('../../src/interfaces/signon/signing-keys.js')
    for (const alg of ['RS256', 'ES256'] as const) expect(credentials.signing_kids).toContain((await signingKey(store, alg, new Date('2026-11-26T00:00:00Z'))).kid)
    const client = (await listClients(store.db)).find((c) => c.client_id === credentials.client_id)
    expect(client).toMatchObject({post_logout_redirect_uris: ['https://fixture.example/signed-out'], id_token_alg: 'ES256'})
  })

  it('client secrets, access tokens and API keys still work', async () => {
    const {app} = await upgraded()
    const tokenInfo = await app.request('/user/oauth/token/info', {headers: {authorization: `Bearer ${credentials.access_token}`}})
    expect(tokenInfo.status).toBe(200)
    expect(await tokenInfo.json()).toMatchObject({resource_owner_id: credentials.member_id, application: {uid: credentials.client_id}})

    const issued = await app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: credentials.client_id, client_secret: credentials.client_secret}))
    expect(issued.status).toBe(200)
    const exportsToken = ((await issued.json()) as {access_token: string}).access_token
    const info = (await (await app.request('/clients/projectsInfo', {headers: {authorization: `Bearer ${exportsToken}`}})).json()) as {ProjectIds: string[]}
    expect(info.ProjectIds).toHaveLength(3)

    const search = await app.request('/conversations/summary?terms[]=patient&start=2025-01-01T00:00:00Z&end=2025-12-31T23:59:59Z', {
      headers: {'x-service-conversation-api-key': credentials.api_key},
    })
    expect(search.status).toBe(200)
  })

  it('counts the posts it already holds into the per-day term statistics, so summaries answer what the index answers', async () => {
    const {store, app} = await upgraded()
    const days = await store.db
      .selectFrom('conversation_term_days')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    expect(Number(days.n)).toBeGreaterThan(0)
    const terms = ['patient', 'the', 'chest pain']
    const start = '2025-01-01T00:00:00.000Z'
    const end = '2025-12-31T23:59:59.000Z'
    const query = {terms, tokens: await tokenizeTexts(terms), start, end}
    const reference = summarySql(query)
    const rows = (await store.db.executeQuery<SummaryRow>(CompiledQuery.raw(reference.text, reference.parameters))).rows
    const params = new URLSearchParams([...terms.map((t) => ['terms[]', t]), ['start', start], ['end', end]])
    const res = await app.request(`/conversations/summary?${params}`, {headers: {'x-service-conversation-api-key': credentials.api_key}})
    expect(res.status).toBe(200)
    expect(((await res.json()) as {summary: unknown}).summary).toEqual(summarize(terms, rows))
  })

  it('the member signs in with the same password', async () => {
    const {app} = await upgraded()
    const params = {client_id: credentials.client_id, redirect_uri: 'https://fixture.example/callback', response_type: 'code', state: 's'}
    const jar = new CookieJar()
    const page = jar.take(await app.request(`/oauth/authorize?${new URLSearchParams(params)}`))
    const signedIn = jar.take(
      await app.request(
        '/oauth/session',
        form(
          {...params, csrf_token: csrfOf(await page.text()), email: credentials.member_email, password: credentials.member_password},
          {...jar.header(), origin: 'http://localhost'},
        ),
      ),
    )
    expect(signedIn.status).toBe(303)
  })

  it('remembers the consent its live member tokens stood for, and its clients keep authenticating as before', async () => {
    const {store, app} = await upgraded()
    // Releases before 0.6.0 knew consent only by live tokens; the migration filled it from them.
    const beforeConsents = release.localeCompare('store-0.6.0', undefined, {numeric: true}) < 0
    // What the migration saw as live depends on when it ran: the fixture's token lives one year.
    const tokens = await store.db.selectFrom('access_tokens').select(['client_id', 'expires_at', 'revoked_at']).where('member_id', '=', credentials.member_id).execute()
    const liveAtMigration = tokens.filter((t) => t.revoked_at === null && (t.expires_at === null || Date.parse(t.expires_at) > Date.now()))
    const consents = await store.db.selectFrom('consents').selectAll().execute()
    if (beforeConsents) expect(consents.map((c) => c.client_id)).toEqual([...new Set(liveAtMigration.map((t) => t.client_id))])
    const client = (await listClients(store.db)).find((c) => c.client_id === credentials.client_id)
    expect(client?.token_endpoint_auth_method).toBe('client_secret_basic')
    // The secret still works, in the Basic header as in the form.
    const viaBasic = await app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basicAuth(credentials.client_id, credentials.client_secret)}))
    expect(viaBasic.status).toBe(200)
    // Without it, a confidential client is refused as before.
    const bare = await app.request('/oauth/token', form({grant_type: 'client_credentials', client_id: credentials.client_id}))
    expect(bare.status).toBe(401)
  })

  it.runIf(credentials.public_client_id !== undefined)('its public client is still public: no secret, PKCE required, its native redirects kept', async () => {
    const {store, app} = await upgraded()
    const client = (await listClients(store.db)).find((c) => c.client_id === credentials.public_client_id)
    expect(client).toMatchObject({token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/callback', 'com.fixture.app:/callback']})
    const params = {client_id: credentials.public_client_id!, redirect_uri: 'http://127.0.0.1:40123/callback', response_type: 'code', state: 's'}
    const withoutPkce = await app.request(`/oauth/authorize?${new URLSearchParams(params)}`)
    expect(new URL(withoutPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')
    const withPkce = await app.request(
      `/oauth/authorize?${new URLSearchParams({...params, code_challenge: 'E9Melhoa2OwvFrEMTJguCQaoeEKmfhB4jv_1ZdOrPV8', code_challenge_method: 'S256'})}`,
    )
    expect(withPkce.status).toBe(200)
  })

  it.runIf(credentials.assertion_client_id !== undefined)('its private_key_jwt client still proves itself with its key, and still must push its requests', async () => {
    const {app, clock} = await upgraded()
    const clientId = credentials.assertion_client_id!
    const key = await importJWK(credentials.assertion_private_jwk!, 'ES256')
    const now = Math.floor(clock.now().getTime() / 1000)
    const assertion = await new SignJWT({iss: clientId, sub: clientId, aud: 'http://localhost/oauth/par', jti: 'upgrade-1', iat: now, exp: now + 60})
      .setProtectedHeader({alg: 'ES256', kid: 'fixture-key'})
      .sign(key)
    const params = {client_id: clientId, redirect_uri: 'https://health.fixture.example/callback', response_type: 'code', state: 's'}
    const pushed = await app.request('/oauth/par', form({...params, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion}))
    expect(pushed.status, await pushed.clone().text()).toBe(201)
    const {request_uri} = (await pushed.json()) as {request_uri: string}
    expect((await app.request(`/oauth/authorize?${new URLSearchParams({client_id: clientId, request_uri})}`)).status).toBe(200)
    const plain = await app.request(`/oauth/authorize?${new URLSearchParams(params)}`)
    expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request')
  })

  it.runIf(credentials.dpop_client_id !== undefined)('its DPoP client still takes only bound tokens, and keeps its back-channel logout URI', async () => {
    const {store, clock} = await upgraded()
    const client = (await listClients(store.db)).find((c) => c.client_id === credentials.dpop_client_id)
    expect(client).toMatchObject({dpop_bound_access_tokens: true, backchannel_logout_uri: 'https://bound.fixture.example/logout'})
    await expect(issueToken(store.db, credentials.member_id, credentials.dpop_client_id!, clock.now())).rejects.toThrow(/only DPoP-bound tokens/)
  })

  it.runIf(credentials.audit !== undefined)('keeps its audit trail row for row, and no credential the script used is anywhere in it', async () => {
    const {store} = await upgraded()
    const trail = credentials.audit!
    expect(trail.map((row) => row.command)).toEqual(expect.arrayContaining(['register-client', 'add-member', 'issue-token', 'issue-api-key', 'credit', 'withdraw']))
    expect((await pageAudit(store.db, {limit: 1000, offset: 0})).rows).toEqual(trail)
    expect(trail.find((row) => row.command === 'add-member')?.changes).toMatchObject({email: credentials.member_email, password: '(changed)'})
    const text = JSON.stringify(await store.db.selectFrom('operator_audit').selectAll().execute())
    for (const secret of [
      credentials.client_secret,
      credentials.partner_password,
      credentials.signing_secret,
      credentials.member_password,
      credentials.access_token,
      credentials.api_key,
    ]) {
      expect(text.includes(secret), secret).toBe(false)
    }
  })

  it.runIf(credentials.audit === undefined)('gets an empty audit trail, which records the next change', async () => {
    const {store} = await upgraded()
    expect(await pageAudit(store.db, {limit: 10, offset: 0})).toEqual({rows: [], total: 0})
    const run = {command: 'update-client', os_user: 'upgrade-test', at: new Date('2026-11-26T00:00:00Z')}
    await recordAudit(store.db, run, {kind: 'client', target: credentials.client_id, changes: {name: 'Renamed'}})
    expect((await pageAudit(store.db, {limit: 10, offset: 0})).rows).toEqual([
      {id: 1, at: '2026-11-26T00:00:00.000Z', os_user: 'upgrade-test', command: 'update-client', target_kind: 'client', target: credentials.client_id, changes: {name: 'Renamed'}},
    ])
  })

  it('the ledger, pulses, posts and the waiting delivery are unchanged', async () => {
    const {app} = await upgraded()
    const auth = {authorization: basicAuth(credentials.client_id, credentials.client_secret)}
    expect(await (await app.request(`/balance/user_id/${credentials.member_id}/summary`, {headers: auth})).json()).toEqual(credentials.balance)
    expect(await (await app.request(`/balance/user_id/${credentials.member_id}/transactions`, {headers: auth})).json()).toEqual(credentials.transactions)
    expect((await app.request(`/balance/transactions/${credentials.withdrawal.id}`, {headers: auth})).status).toBe(200)
    const count = async (table: string) => (await sql<{n: number}>`select count(*) as n from ${sql.table(table)}`.execute(store.db)).rows[0]!.n
    expect(Object.keys(credentials.row_counts).length).toBeGreaterThan(0)
    for (const [table, rows] of Object.entries(credentials.row_counts)) expect(await count(table), table).toBe(rows)
  })

  it('partner credentials and the signing secret still reach the partner', async () => {
    const {store, clock} = await upgraded()
    const transport = new FakeTransport()
    await new DeliveryWorker({db: store.db, keys: store.keys, clock, transport}).drain({now: true, projectIds: ['P-FIX']})
    expect(transport.requests).toHaveLength(1)
    const [request] = transport.requests
    expect(request!.url).toBe('http://127.0.0.1:9/v1/projects/P-FIX')
    expect(request!.headers.authorization).toBe(basicAuth(credentials.partner_username, credentials.partner_password))
    expect(request!.headers['x-medpanel-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    const ids = (await sql<{request_id: string | null}>`select request_id from partner_deliveries`.execute(store.db)).rows.map((r) => r.request_id)
    if (credentials.signing_kids === undefined) {
      // Queued before deliveries kept the request id of the run that queued them: sent without one.
      expect(request!.headers).not.toHaveProperty('x-request-id')
      expect(ids).toEqual([null])
    } else {
      // From 0.4.0 on the push's request id was stored with it, and goes out with the delivery.
      expect(request!.headers['x-request-id']).toBe(ids[0])
    }
  })

  // Stores from before OpenID Connect (0.4.0 makes keys and sets these itself).
  it.runIf(credentials.signing_kids === undefined)('gives every client the OpenID Connect defaults: no post-logout redirect URIs, ID tokens signed RS256', async () => {
    const {store} = await upgraded()
    const clients = await listClients(store.db)
    expect(clients.map((c) => c.client_id)).toEqual(expect.arrayContaining([credentials.client_id, credentials.partner_client_id]))
    for (const client of clients) expect(client, client.client_id).toMatchObject({post_logout_redirect_uris: [], id_token_alg: 'RS256'})
    // And the store has no signing key until the first ID token (or rotate-signing-key) makes one.
    expect((await sql<{n: number}>`select count(*) as n from signing_keys`.execute(store.db)).rows[0]!.n).toBe(0)
  })

  it('seals the secrets an earlier release kept in the clear on the first open, and drops the stored cookie secret', async () => {
    const {store} = await upgraded()
    const rows = (
      await sql<{partner_password: string | null; signing_secret: string | null}>`select partner_password, signing_secret from clients where partner_password is not null`.execute(
        store.db,
      )
    ).rows
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      expect(row.partner_password).toMatch(/^sealed:v1:/)
      expect(row.signing_secret).toMatch(/^sealed:v1:/)
    }
    expect((await sql<{n: number}>`select count(*) as n from settings where key = 'cookie_secret'`.execute(store.db)).rows[0]!.n).toBe(0)
  })
})

describe('schema changes', () => {
  const stores: Store<any>[] = []
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close()
  })
  const migration = (statements: string[]): Migration => ({
    async up(db) {
      for (const statement of statements) await sql.raw(statement).execute(db)
    },
  })

  it('refuses a store written by a newer release, naming both schemas, and changes nothing', async () => {
    const file = join(tempDir(), 'newer.db')
    stores.push(await openStore({file}))
    await sql`insert into kysely_migration (name, timestamp) values ('2099010101_from_the_future', '2099-01-01T00:00:00Z')`.execute(stores[0]!.db)
    await stores.pop()!.close()
    const attempt = openStore({file})
    await expect(attempt).rejects.toThrow(/written by a newer medpanel \(store schema 2099010101_from_the_future\); this is medpanel \S+ \(schema \d+_\w+\)/)
  })

  it('runs each migration in one transaction: a failing one leaves the store at the one before', async () => {
    const file = join(tempDir(), 'half.db')
    const schema = {
      migrationTableName: 'test_migrations',
      migrations: {
        '0001_first': migration(['create table first (id integer primary key)']),
        '0002_broken': migration(['create table second (id integer primary key)', 'insert into second (id) values (1)', 'insert into nowhere values (1)']),
      },
    }
    await expect(openStoreWith({file}, schema)).rejects.toThrow(/migration 0002_broken failed, and .* was left as it was before it: no such table: nowhere/)
    const store = await openStoreWith({file}, {migrationTableName: 'test_migrations', migrations: {'0001_first': schema.migrations['0001_first']}})
    stores.push(store)
    const tables = (await sql<{name: string}>`select name from sqlite_master where type = 'table' order by name`.execute(store.db)).rows.map((r) => r.name)
    expect(tables).toContain('first')
    expect(tables).not.toContain('second')
    expect((await sql<{name: string}>`select name from test_migrations`.execute(store.db)).rows.map((r) => r.name)).toEqual(['0001_first'])
  })

  it('verifies a password hashed with older parameters and re-hashes it at the next sign-in, tokens untouched', async () => {
    const store = await openMemoryStore()
    stores.push(store)
    const clock = new ManualClock()
    const app = createApp({store, clock, log: () => undefined})
    const {registerClient, addMember} = await import('../../src/registry/service.js')
    const client = await registerClient(
      store,
      {name: 'Old', url: 'https://old.example', logo_url: 'https://old.example/l.png', redirect_uris: ['https://old.example/cb']},
      clock.now(),
    )
    const member = await addMember(
      store.db,
      {email: 'old@clinic.example', password: 'old password 1', first_name: 'O', last_name: 'L', country: 'US', specialty: 'Oncology'},
      clock.now(),
    )
    // What an earlier release stored: scrypt with a smaller N, its parameters beside the hash.
    const salt = randomBytes(16)
    const key = scryptSync('old password 1', salt, 32, {N: 1024, r: 8, p: 1})
    const stored = `scrypt$1024$8$1$${salt.toString('base64')}$${key.toString('base64')}`
    expect(needsRehash(stored)).toBe(true)
    await sql`update members set password_hash = ${stored} where id = ${member.user_id}`.execute(store.db)
    const changedAt = (await sql<{password_changed_at: string}>`select password_changed_at from members where id = ${member.user_id}`.execute(store.db)).rows[0]!
      .password_changed_at

    const params = {client_id: client.client_id, redirect_uri: 'https://old.example/cb', response_type: 'code', state: 's'}
    const jar = new CookieJar()
    const page = jar.take(await app.request(`/oauth/authorize?${new URLSearchParams(params)}`))
    const signedIn = await app.request(
      '/oauth/session',
      form({...params, csrf_token: csrfOf(await page.text()), email: 'old@clinic.example', password: 'old password 1'}, {...jar.header(), origin: 'http://localhost'}),
    )
    expect(signedIn.status).toBe(303)
    const after = (
      await sql<{password_hash: string; password_changed_at: string}>`select password_hash, password_changed_at from members where id = ${member.user_id}`.execute(store.db)
    ).rows[0]!
    expect(after.password_hash).not.toBe(stored)
    expect(needsRehash(after.password_hash)).toBe(false)
    expect(await verifyPassword('old password 1', after.password_hash)).toBe(true)
    // A re-hash is not a password change: sessions and tokens keyed on it live on.
    expect(after.password_changed_at).toBe(changedAt)
  })
})
