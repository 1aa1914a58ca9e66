import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {storeMetrics} from '../../src/instrument.js'
import * as balance from '../../src/interfaces/balance/service.js'
import {seedPosts} from '../../src/interfaces/conversations/seed.js'
import {pushProject} from '../../src/interfaces/partner/service.js'
import {DeliveryWorker} from '../../src/interfaces/partner/worker.js'
import {issueToken} from '../../src/interfaces/signon/issue-token.js'
import {ManualClock} from '../../src/lib/clock.js'
import {findMemberBy} from '../../src/registry/repository.js'
import {registerClient, revokeConsent, updateClient, updateMember} from '../../src/registry/service.js'
import {openStore} from '../../src/schema.js'
import type {Store} from '../../src/store/db.js'
import {freshApp, form, type TestContext} from '../helpers/app.js'
import {tempDir} from '../helpers/cli.js'
import {onPostgres} from '../helpers/store.js'
import {AUTH, CLIENT, PAYPAL_DETAILS, seedClients, seedMember} from '../interfaces/balance/setup.js'
import {clientWithKey, JSON_TYPE, query} from '../interfaces/conversations/helpers.js'
import {FakeTransport, projectInput} from '../interfaces/partner/helpers.js'
import {authorizeParams, bearer, CookieJar, csrfOf, exchange, ORIGIN, PASSWORD, REDIRECT, setupClientAndMember, signIn, tokenFor} from '../interfaces/signon/flow.js'
import {basicAuth} from '../helpers/http-basic.js'
import {at, key, type Labels, moved, parse, scrape} from '../helpers/metrics.js'

/*
 * GET /metrics of an in-process app: every metric exists, and moves when the scenario behind it
 * runs. Each test has its own store, so its own registry: counters start at 0 whatever else this
 * process ran.
 */

describe('/metrics', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  it('answers the Prometheus text format, every name prefixed medpanel_, the process metrics included', async () => {
    const res = await ctx.app.request('/metrics')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    const text = await res.text()
    const names = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]!)
    expect(names.every((name) => name.startsWith('medpanel_'))).toBe(true)
    for (const name of [
      'medpanel_process_cpu_seconds_total',
      'medpanel_process_resident_memory_bytes',
      'medpanel_nodejs_heap_size_used_bytes',
      'medpanel_nodejs_eventloop_lag_seconds',
    ]) {
      expect(names).toContain(name)
    }
    // The bounded labels exist at 0 before anything happened.
    const samples = parse(text)
    expect(samples.get(key('medpanel_signon_tokens_issued_total', {grant_type: 'operator'}))).toBe(0)
    expect(samples.get(key('medpanel_balance_withdrawals_refused_total', {reason: 'insufficient_funds'}))).toBe(0)
    expect(samples.get(key('medpanel_search_requests_total', {kind: 'data', outcome: 'timeout'}))).toBe(0)
    expect(samples.get(key('medpanel_guessing_refusals_total', {credential: 'api_key'}))).toBe(0)
    expect(samples.get(key('medpanel_store_migrations_applied'))).toBeGreaterThan(10)
    expect(samples.has(key(onPostgres ? 'medpanel_store_pg_pool_connections' : 'medpanel_store_sqlite_wal_bytes', onPostgres ? {state: 'total'} : {}))).toBe(true)
    expect(await (await ctx.app.request('/metrics', {method: 'POST'})).json()).toEqual({message: 'POST is not supported here; use GET'})
  })

  it("counts each app's requests in its own registry, by route template and status class", async () => {
    const other = await freshApp()
    try {
      await ctx.app.request('/user/oauth/token/info')
      await ctx.app.request('/user/oauth/token/info', bearer('not-a-token'))
      await ctx.app.request('/balance/user_id/12345/withdrawals', {method: 'POST'})
      await ctx.app.request('/balance/npi/1234567893/summary')
      await ctx.app.request('/no/such/path/4711')
      await ctx.app.request('/healthz')
      const samples = await scrape(ctx.app)
      const requests = (labels: Labels) => at(samples, 'medpanel_http_requests_total', labels)
      expect(requests({interface: 'A', route: '/user/oauth/token/info', status_class: '4xx'})).toBe(2)
      // Refused by C's authentication (a /balance/* guard) and still counted under the route it was for.
      expect(requests({interface: 'C', route: '/balance/:key/:id/withdrawals', status_class: '4xx'})).toBe(1)
      expect(requests({interface: 'C', route: '/balance/:key/:id/summary', status_class: '4xx'})).toBe(1)
      expect(requests({interface: 'other', route: 'unmatched', status_class: '4xx'})).toBe(1)
      expect(requests({interface: 'other', route: '/healthz', status_class: '2xx'})).toBe(1)
      expect(at(samples, 'medpanel_http_request_duration_seconds_count', {interface: 'A', route: '/user/oauth/token/info'})).toBe(2)
      expect(at(samples, 'medpanel_http_request_duration_seconds_sum', {interface: 'A', route: '/user/oauth/token/info'})).toBeGreaterThan(0)
      // Raw paths never become labels. Only names and labels are looked at: a sample's value
      // (a byte count, a CPU time) may hold those digits by chance, as one did in a CI run.
      const text = await (await ctx.app.request('/metrics')).text()
      const series = text
        .split('\n')
        .filter((line) => line !== '' && !line.startsWith('#'))
        .map((line) => line.slice(0, line.lastIndexOf(' ')))
      expect(series.length).toBeGreaterThan(20)
      expect(series.filter((line) => /12345|4711|1234567893/.test(line))).toEqual([])
      // The other app, on its own store, saw none of it.
      const theirs = await scrape(other.app)
      expect(at(theirs, 'medpanel_http_requests_total', {interface: 'A', route: '/user/oauth/token/info', status_class: '4xx'})).toBe(0)
      expect(at(theirs, 'medpanel_http_requests_total', {interface: 'other', route: 'unmatched', status_class: '4xx'})).toBe(0)
    } finally {
      await other.store.close()
    }
  })

  it('labels D and E routes with their interface', async () => {
    await ctx.app.request('/conversations/summary', {headers: {Accept: JSON_TYPE}})
    await ctx.app.request('/projects/P-100/export')
    const samples = await scrape(ctx.app)
    expect(at(samples, 'medpanel_http_requests_total', {interface: 'E', route: '/conversations/summary', status_class: '4xx'})).toBe(1)
    expect(at(samples, 'medpanel_http_requests_total', {interface: 'D', route: '/projects/:projectId/export', status_class: '4xx'})).toBe(1)
  })

  it('counts sign-on: codes, tokens by grant type, revocations, sign-ins and live sessions', async () => {
    const {client, member} = await setupClientAndMember(ctx, {grants: ['signon', 'pulses']})
    const before = await scrape(ctx.app)
    const A = (name: string) => `medpanel_signon_${name}`

    // A wrong password, then the whole code flow (a sign-in, a code, its exchange).
    const params = {client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's'}
    const jar = new CookieJar()
    const page = jar.take(await ctx.app.request(`/oauth/authorize?${new URLSearchParams(params)}`))
    const wrong = await ctx.app.request(
      '/oauth/session',
      form({...params, csrf_token: csrfOf(await page.text()), email: 'ana@clinic.example', password: 'wrong'}, {...jar.header(), origin: 'http://localhost'}),
    )
    expect(wrong.status).toBe(401)
    const token = await tokenFor(ctx, client)
    const afterFlow = await scrape(ctx.app)
    expect(moved(before, afterFlow, A('signins_total'), {outcome: 'failure'})).toBe(1)
    expect(moved(before, afterFlow, A('signins_total'), {outcome: 'success'})).toBe(1)
    expect(moved(before, afterFlow, A('codes_issued_total'))).toBe(1)
    expect(moved(before, afterFlow, A('tokens_issued_total'), {grant_type: 'authorization_code'})).toBe(1)
    expect(at(afterFlow, A('active_sessions'))).toBe(1)

    // The client's own token; an operator's (issue-token) is minted by a command in a process of
    // its own, which no /metrics shows: the service counts it nowhere.
    const own = await exchange(ctx, {grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret})
    expect(own.status).toBe(200)
    const operator = await issueToken(ctx.db, member.user_id, client.client_id, ctx.clock.now())
    const issued = await scrape(ctx.app)
    expect(moved(afterFlow, issued, A('tokens_issued_total'), {grant_type: 'client_credentials'})).toBe(1)
    expect(moved(afterFlow, issued, A('tokens_issued_total'), {grant_type: 'operator'})).toBe(0)

    // RFC 7009 revocation of the code's token and of the client's own; the member taking consent
    // back on the applications page ends the operator's.
    for (const revoking of [token, ((await own.json()) as {access_token: string}).access_token]) {
      const revoked = await ctx.app.request('/oauth/revoke', form({token: revoking, client_id: client.client_id, client_secret: client.client_secret}))
      expect(revoked.status).toBe(200)
    }
    const browser = await signIn(ctx, authorizeParams(client.client_id))
    const taken = await ctx.app.request(
      '/oauth/authorized_applications/revoke',
      form({csrf_token: browser.csrf, client_id: client.client_id, confirm: 'yes'}, {...browser.jar.header(), origin: ORIGIN}),
    )
    expect(taken.status).toBe(303)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(operator.access_token))).status).toBe(401)
    const revoked = await scrape(ctx.app)
    expect(moved(issued, revoked, A('tokens_revoked_total'), {grant_type: 'authorization_code'})).toBe(1)
    expect(moved(issued, revoked, A('tokens_revoked_total'), {grant_type: 'operator'})).toBe(1)
    expect(moved(issued, revoked, A('tokens_revoked_total'), {grant_type: 'client_credentials'})).toBe(1)

    // An operator's change counts nowhere, for the same reason as issue-token: the client's live
    // token dies with its expiry, and no series moves.
    const live = await exchange(ctx, {grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret})
    const liveToken = ((await live.json()) as {access_token: string}).access_token
    const beforeExpiry = await scrape(ctx.app)
    expect(await updateClient(ctx.store, client.client_id, {expire: true}, ctx.clock.now())).toMatchObject({revoked_tokens: 1})
    expect((await ctx.app.request('/user/oauth/token/info', bearer(liveToken))).status).toBe(401)
    const afterExpiry = await scrape(ctx.app)
    for (const origin of ['authorization_code', 'refresh_token', 'client_credentials', 'operator']) {
      expect([origin, moved(beforeExpiry, afterExpiry, A('tokens_revoked_total'), {grant_type: origin})]).toEqual([origin, 0])
    }

    // Sessions end with the member's password change.
    ctx.clock.advance(60)
    await updateMember(ctx.db, member.user_id, {password: 'another password 1'}, ctx.clock.now())
    expect(at(await scrape(ctx.app), A('active_sessions'))).toBe(0)
  })

  it('counts refusals of the guessing limits by kind of secret only', async () => {
    const {client} = await setupClientAndMember(ctx, {grants: ['signon', 'pulses']})
    const before = await scrape(ctx.app)
    // 20 wrong client secrets are answered 401; the 21st finds a lock in force: 429.
    const statuses: number[] = []
    for (let i = 0; i < 21; i++) statuses.push((await exchange(ctx, {grant_type: 'client_credentials', client_id: client.client_id, client_secret: `wrong-${i}`})).status)
    expect(statuses.filter((status) => status === 429)).toHaveLength(1)
    for (let i = 0; i < 21; i++)
      await ctx.app.request(`/conversations/summary?${query(['a'], '2025-01-01T00:00:00Z', '2025-02-01T00:00:00Z')}`, {
        headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': `mpk_wrong_${i}`},
      })
    // Five wrong passwords, then the member is locked for a moment.
    const params = {client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's'}
    const signInWith = async (password: string) => {
      const jar = new CookieJar()
      const page = jar.take(await ctx.app.request(`/oauth/authorize?${new URLSearchParams(params)}`))
      return ctx.app.request(
        '/oauth/session',
        form({...params, csrf_token: csrfOf(await page.text()), email: 'ana@clinic.example', password}, {...jar.header(), origin: 'http://localhost'}),
      )
    }
    for (let i = 0; i < 5; i++) expect((await signInWith('wrong')).status).toBe(401)
    expect((await signInWith(PASSWORD)).status).toBe(429)
    const after = await scrape(ctx.app)
    expect(moved(before, after, 'medpanel_guessing_refusals_total', {credential: 'client_secret'})).toBe(1)
    expect(moved(before, after, 'medpanel_guessing_refusals_total', {credential: 'api_key'})).toBe(1)
    expect(moved(before, after, 'medpanel_guessing_refusals_total', {credential: 'password'})).toBe(1)
    expect(moved(before, after, 'medpanel_signon_signins_total', {outcome: 'failure'})).toBe(6)
    const labelled = [...after.keys()].filter((name) => name.startsWith('medpanel_guessing_refusals_total'))
    expect(labelled.sort()).toEqual(['api_key', 'client_secret', 'password'].map((credential) => key('medpanel_guessing_refusals_total', {credential})))
  })

  it('counts withdrawals created, replayed and refused by reason', async () => {
    await seedClients(ctx.store, ctx.clock.now())
    const member = await seedMember(ctx.db, ctx.clock.now())
    const holder = async () => (await findMemberBy(ctx.db, 'id', member.user_id))!
    await balance.postCredit(ctx.db, await holder(), {type: 'HONORARIUM', amount: '12.00'}, ctx.clock.now())
    const withdraw = (body: unknown, headers: Record<string, string> = {}, account = `user_id/${member.user_id}`) =>
      ctx.app.request(`/balance/${account}/withdrawals`, {method: 'POST', headers: {...AUTH, 'content-type': 'application/json', ...headers}, body: JSON.stringify(body)})
    const before = await scrape(ctx.app)
    const paypal = (amount: number) => ({type: 'PAYPAL', amount, member_details: PAYPAL_DETAILS})

    // 12.00 - 3.00 leaves 9.00: below PayPal's minimum balance of 10.00, above a gift card's 5.00.
    expect((await withdraw(paypal(3), {'Idempotency-Key': 'k1'})).status).toBe(201)
    expect((await withdraw(paypal(3), {'Idempotency-Key': 'k1'})).status).toBe(201)
    expect((await withdraw(paypal(4), {'Idempotency-Key': 'k1'})).status).toBe(422)
    expect((await withdraw(paypal(1))).status).toBe(422)
    expect((await withdraw({type: 'GIFT_CARD', amount: 500, member_details: PAYPAL_DETAILS})).status).toBe(422)
    expect((await withdraw({type: 'NO_SUCH_TYPE', amount: 1, member_details: PAYPAL_DETAILS})).status).toBe(422)
    expect((await withdraw({type: 'GIFT_CARD', amount: 1, member_details: {first_name: 'Ada'}})).status).toBe(422)
    expect((await withdraw(paypal(1), {}, 'user_id/999999')).status).toBe(404)
    await balance.restrictWithdrawalType(ctx.db, await holder(), 'GIFT_CARD', false, ctx.clock.now())
    expect((await withdraw({type: 'GIFT_CARD', amount: 1, member_details: PAYPAL_DETAILS})).status).toBe(403)
    await updateMember(ctx.db, member.user_id, {active: false}, ctx.clock.now())
    expect((await withdraw(paypal(1))).status).toBe(403)
    // Refused before the rules by authentication: an HTTP 401, no withdrawal refusal.
    expect((await withdraw(paypal(1), {authorization: basicAuth(CLIENT.id, 'wrong')})).status).toBe(401)

    const after = await scrape(ctx.app)
    const C = 'medpanel_balance_'
    expect(moved(before, after, `${C}withdrawals_created_total`)).toBe(1)
    expect(moved(before, after, `${C}idempotent_replays_total`)).toBe(1)
    const refused = (reason: string) => moved(before, after, `${C}withdrawals_refused_total`, {reason})
    expect({
      idempotency_conflict: refused('idempotency_conflict'),
      insufficient_funds: refused('insufficient_funds'),
      below_minimum: refused('below_minimum'),
      unknown_type: refused('unknown_type'),
      invalid: refused('invalid'),
      unknown_account: refused('unknown_account'),
      restricted: refused('restricted'),
      inactive_member: refused('inactive_member'),
    }).toEqual({idempotency_conflict: 1, insufficient_funds: 1, below_minimum: 1, unknown_type: 1, invalid: 1, unknown_account: 1, restricted: 1, inactive_member: 1})
  })

  it('counts delivery attempts by outcome, scheduled retries, and each partner outbox as it fills and drains', async () => {
    const partner = async (name: string) =>
      (
        await registerClient(
          ctx.store,
          {
            name,
            url: 'https://partner.example',
            logo_url: 'https://partner.example/logo.png',
            grants: ['partner'],
            partner_url: `http://${name.toLowerCase()}.test`,
            allow_insecure_partner_url: true,
            partner_username: 'medpanel',
            partner_password: 'pw',
          },
          ctx.clock.now(),
        )
      ).client_id
    const [ok, failing, down, gone] = [await partner('Ok'), await partner('Failing'), await partner('Down'), await partner('Gone')]
    const empty = await scrape(ctx.app)
    for (const id of [ok, failing, down, gone]) {
      expect(at(empty, 'medpanel_partner_outbox_depth', {partner: id})).toBe(0)
      expect(at(empty, 'medpanel_partner_outbox_oldest_age_seconds', {partner: id})).toBe(0)
    }
    await pushProject(ctx.db, projectInput(), {}, ctx.clock.now())
    ctx.clock.advance(30)
    const queued = await scrape(ctx.app)
    for (const id of [ok, failing, down, gone]) {
      expect(at(queued, 'medpanel_partner_outbox_depth', {partner: id})).toBe(1)
      expect(at(queued, 'medpanel_partner_outbox_oldest_age_seconds', {partner: id})).toBe(30)
    }
    await updateClient(ctx.store, gone, {expire: true}, ctx.clock.now())
    const transport = new FakeTransport((request) =>
      request.url.startsWith('http://failing.test') ? 503 : request.url.startsWith('http://down.test') ? new Error('connect ECONNREFUSED') : 200,
    )
    await new DeliveryWorker({db: ctx.db, keys: ctx.store.keys, clock: ctx.clock, transport, metrics: storeMetrics(ctx.store, ctx.clock)}).drain()
    const after = await scrape(ctx.app)
    const attempts = (outcome: string) => moved(queued, after, 'medpanel_partner_delivery_attempts_total', {outcome})
    expect({delivered: attempts('delivered'), failed: attempts('failed'), network_error: attempts('network_error'), undeliverable: attempts('undeliverable')}).toEqual({
      delivered: 1,
      failed: 1,
      network_error: 1,
      undeliverable: 1,
    })
    expect(moved(queued, after, 'medpanel_partner_retries_scheduled_total')).toBe(2)
    expect(at(after, 'medpanel_partner_outbox_depth', {partner: ok})).toBe(0)
    expect(at(after, 'medpanel_partner_outbox_depth', {partner: gone})).toBe(0)
    expect(at(after, 'medpanel_partner_outbox_depth', {partner: failing})).toBe(1)
    expect(at(after, 'medpanel_partner_outbox_oldest_age_seconds', {partner: down})).toBe(30)
    expect(at(after, 'medpanel_partner_outbox_oldest_age_seconds', {partner: ok})).toBe(0)
  })

  it('counts conversation searches by kind and outcome, their time, data calls, and answers cut short', async () => {
    await seedPosts(ctx.db, {count: 60, comments: 2, from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:59:59Z', seed: 5})
    const {key} = await clientWithKey(ctx, {data_calls: 2})
    const call = (method: string, terms: string[], start = '2025-01-01T00:00:00Z') =>
      ctx.app.request(`/conversations/${method}?${query(terms, start, '2025-12-31T23:59:59Z')}`, {headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key}})
    const before = await scrape(ctx.app)
    expect((await call('summary', ['the'])).status).toBe(200)
    expect((await call('summary', ['the'], 'not-a-date')).status).toBe(400)
    const whole = await call('data', ['the'])
    expect(whole.status).toBe(200)
    expect((await whole.json()).conversations.length).toBeGreaterThan(0)
    // The reader goes away after the first piece: the answer is cut short.
    const reader = (await call('data', ['the'])).body!.getReader()
    await reader.read()
    await reader.cancel()
    expect((await call('data', ['the'])).status).toBe(429)
    expect(
      (
        await ctx.app.request(`/conversations/summary?${query(['the'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {
          method: 'HEAD',
          headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key},
        })
      ).status,
    ).toBe(200)
    const after = await scrape(ctx.app)
    const requests = (kind: string, outcome: string) => moved(before, after, 'medpanel_search_requests_total', {kind, outcome})
    expect(requests('summary', 'ok')).toBe(1)
    expect(requests('summary', 'invalid')).toBe(1)
    expect(requests('data', 'ok')).toBe(2)
    expect(requests('data', 'throttled')).toBe(1)
    expect(moved(before, after, 'medpanel_search_data_calls_total')).toBe(2)
    expect(moved(before, after, 'medpanel_search_truncated_total')).toBe(1)
    expect(moved(before, after, 'medpanel_search_queue_wait_seconds_count')).toBe(3)
    expect(moved(before, after, 'medpanel_search_duration_seconds_count')).toBe(3)
    expect(at(after, 'medpanel_search_duration_seconds_sum')).toBeGreaterThan(0)
    // Without search threads (an in-memory store) nothing waits for one, and no thread is busy.
    expect(at(after, 'medpanel_search_queue_wait_seconds_sum')).toBe(0)
    expect(at(after, 'medpanel_search_threads_busy')).toBe(0)
  })

  it('times group commits and counts the writes in each', async () => {
    const {client, member} = await setupClientAndMember(ctx)
    const before = await scrape(ctx.app)
    await Promise.all(Array.from({length: 5}, () => revokeConsent(ctx.db, member.user_id, client.client_id, ctx.clock.now())))
    const after = await scrape(ctx.app)
    const commits = moved(before, after, 'medpanel_store_commit_batch_size_count')
    const writes = moved(before, after, 'medpanel_store_commit_batch_size_sum')
    expect(commits).toBeGreaterThan(0)
    expect(moved(before, after, 'medpanel_store_commit_duration_seconds_count')).toBe(commits)
    expect(moved(before, after, 'medpanel_store_commit_duration_seconds_sum')).toBeGreaterThan(0)
    // Five writes asked for in one turn commit together, on either store.
    expect(writes).toBe(5)
    expect(at(after, 'medpanel_store_commit_batch_size_bucket', {le: '4'})).toBeLessThan(at(after, 'medpanel_store_commit_batch_size_bucket', {le: '8'}))
  })
})

describe('/metrics of a store file', () => {
  const open: Store[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()))
  })

  async function appOnFile(): Promise<TestContext> {
    const store = await openStore({file: join(tempDir('medpanel-metrics-'), 'store.db'), reader: true})
    open.push(store)
    const clock = new ManualClock()
    const logs: string[] = []
    return {store, db: store.db, clock, logs, app: createApp({store, clock, log: (line) => logs.push(line), conversations: {pageSize: 5, threads: 2}})}
  }

  it.skipIf(onPostgres)("reports SQLite's write-ahead log, and search threads while they hold a search", async () => {
    const ctx = await appOnFile()
    await seedPosts(ctx.db, {count: 200, comments: 2, from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:59:59Z', seed: 5})
    expect(at(await scrape(ctx.app), 'medpanel_store_sqlite_wal_bytes')).toBeGreaterThan(0)

    const {key} = await clientWithKey(ctx, {data_calls: 5})
    const before = await scrape(ctx.app)
    expect(at(before, 'medpanel_search_threads_busy')).toBe(0)
    // A data answer holds its thread until it has been read: read its first piece only.
    const res = await ctx.app.request(`/conversations/data?${query(['the'], '2025-01-01T00:00:00Z', '2025-12-31T23:59:59Z')}`, {
      headers: {Accept: JSON_TYPE, 'X-Service-Conversation-API-Key': key.api_key},
    })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    await reader.read()
    const reading = await scrape(ctx.app)
    expect(at(reading, 'medpanel_search_threads_busy')).toBe(1)
    expect(moved(before, reading, 'medpanel_search_queue_wait_seconds_count')).toBe(1)
    expect(moved(before, reading, 'medpanel_search_duration_seconds_count')).toBe(1)
    await reader.cancel()
    let busy = 1
    for (let i = 0; i < 200 && busy > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      busy = at(await scrape(ctx.app), 'medpanel_search_threads_busy')
    }
    expect(busy).toBe(0)
    expect(moved(before, await scrape(ctx.app), 'medpanel_search_truncated_total')).toBe(1)
  })

  it('is shared by the apps on one store, as its search threads are', async () => {
    const ctx = await appOnFile()
    const second = createApp({store: ctx.store, clock: ctx.clock, log: () => undefined})
    await ctx.app.request('/healthz')
    await second.request('/healthz')
    expect(at(await scrape(second), 'medpanel_http_requests_total', {interface: 'other', route: '/healthz', status_class: '2xx'})).toBe(2)
  })
})

describe('who may read /metrics', () => {
  let store: Store
  const clock = new ManualClock()
  beforeEach(async () => {
    store = (await freshApp()).store
  })
  afterEach(async () => store.close())

  /** A request as @hono/node-server hands it over: the TCP peer and the raw headers. */
  const from = (app: ReturnType<typeof createApp>, peer: string, headers: Record<string, string> = {}) =>
    app.request('/metrics', {headers}, {incoming: {socket: {remoteAddress: peer}, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]))}})

  it('without a token: loopback callers only, judged by the address --trust-proxy resolves', async () => {
    const app = createApp({store, clock, log: () => undefined})
    for (const peer of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect((await from(app, peer)).status, peer).toBe(200)
    for (const peer of ['203.0.113.9', '10.0.0.5', '::ffff:10.0.0.5', 'fd00::2']) {
      const res = await from(app, peer)
      expect(res.status, peer).toBe(403)
      expect(await res.json()).toEqual({message: '/metrics answers only callers on this machine (loopback); to scrape it from elsewhere, start serve with --metrics-token'})
    }
    // Relayed by a proxy --trust-proxy does not name: the caller is unknown, whatever it claims.
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) expect((await from(app, '127.0.0.1', {[header]: '127.0.0.1'})).status, header).toBe(403)
    // A non-loopback peer cannot claim loopback either.
    expect((await from(app, '203.0.113.9', {'x-forwarded-for': '127.0.0.1'})).status).toBe(403)

    const proxied = createApp({store, clock, log: () => undefined, trustProxy: ['127.0.0.2', '10.0.0.2']})
    // The proxy on this machine relaying a caller from elsewhere: refused; one on this machine: answered.
    expect((await from(proxied, '127.0.0.2', {'x-forwarded-for': '203.0.113.9'})).status).toBe(403)
    expect((await from(proxied, '127.0.0.2', {'x-forwarded-for': '127.0.0.1, 203.0.113.9'})).status).toBe(403)
    expect((await from(proxied, '127.0.0.2', {'x-forwarded-for': '127.0.0.1'})).status).toBe(200)
    // The proxy's own request (no X-Forwarded-For) is judged by its address.
    expect((await from(proxied, '127.0.0.2')).status).toBe(200)
    expect((await from(proxied, '10.0.0.2')).status).toBe(403)
    // A proxy elsewhere speaks for its own loopback, not this machine's.
    expect((await from(proxied, '10.0.0.2', {'x-forwarded-for': '127.0.0.1'})).status).toBe(403)
  })

  it('with a token: any caller with it as a Bearer token, nobody without it', async () => {
    const token = 'a-metrics-token-0123456789abcdef'
    const app = createApp({store, clock, log: () => undefined, metricsToken: token})
    for (const peer of ['127.0.0.1', '203.0.113.9']) {
      const missing = await from(app, peer)
      expect(missing.status).toBe(401)
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm="medpanel", error="invalid_request"/)
      expect(await missing.json()).toEqual({message: '/metrics needs the metrics token as a Bearer token'})
      const wrong = await from(app, peer, {authorization: `Bearer ${token.slice(0, -1)}x`})
      expect(wrong.status).toBe(401)
      expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
      expect((await from(app, peer, {authorization: basicAuth('x', token)})).status).toBe(401)
      expect((await from(app, peer, {authorization: `Bearer ${token}`})).status).toBe(200)
    }
    expect((await app.request('/metrics', {headers: {authorization: `Bearer ${token}`}})).status).toBe(200)
    expect((await app.request('/metrics')).status).toBe(401)
  })

  it('is not served, and nothing is counted, with metrics off', async () => {
    const app = createApp({store, clock, log: () => undefined, metrics: false})
    expect((await app.request('/metrics')).status).toBe(404)
    await app.request('/healthz')
    const counting = createApp({store, clock, log: () => undefined})
    expect(at(await scrape(counting), 'medpanel_http_requests_total', {interface: 'other', route: '/healthz', status_class: '2xx'})).toBe(0)
  })
})
