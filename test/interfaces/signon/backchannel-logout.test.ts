import {createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet} from 'jose'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {httpTransport} from '../../../src/http/outbound.js'
import {endEverySession} from '../../../src/interfaces/signon/sessions.js'
import {LogoutWorker} from '../../../src/interfaces/signon/logout-worker.js'
import {hostname} from 'node:os'
import {lease, listDeliveries, updateDelivery} from '../../../src/interfaces/signon/logout-repository.js'
import {iso} from '../../../src/lib/clock.js'
import {BACKCHANNEL_LOGOUT_EVENT} from '../../../src/interfaces/signon/oidc.js'
import {addMember, type RegisteredClient, updateMember} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {LogoutReceiver} from '../../helpers/logout-receiver.js'
import {authorizeParams, csrfOf, type CookieJar, exchange, ORIGIN, PASSWORD, REDIRECT, setupClientAndMember, signIn} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'
import {storeMetrics} from '../../../src/instrument.js'
import {moved, scrape} from '../../helpers/metrics.js'

/*
 * OpenID Connect Back-Channel Logout 1.0: a session's end reaches every client that got an ID token
 * in it, as a logout token posted to a real loopback receiver by the logout worker.
 */

const ISSUER = 'http://localhost'
/** A process id no process has (above Linux's pid_max). */
const DEAD_PID = 2_147_483_646

let ctx: TestContext
let client: RegisteredClient
let memberId: number
let receiver: LogoutReceiver
let worker: LogoutWorker

beforeEach(async () => {
  ctx = await freshApp()
  receiver = await new LogoutReceiver().start()
  const setup = await setupClientAndMember(ctx, {backchannel_logout_uri: receiver.url, backchannel_logout_session_required: true})
  client = setup.client
  memberId = setup.member.user_id
  worker = new LogoutWorker({
    db: ctx.db,
    reader: ctx.store.reader,
    keys: ctx.store.keys,
    clock: ctx.clock,
    transport: httpTransport(),
    issuer: ISSUER,
    metrics: storeMetrics(ctx.store, ctx.clock),
  })
})
afterEach(async () => {
  await receiver.stop()
  await ctx.store.close()
})

const oidc = (clientId = client.client_id, extra: Record<string, string> = {}) => authorizeParams(clientId, {scope: 'openid profile', nonce: 'n-1', ...extra})

/**
 * Signs in (or uses `jar`, already signed in), allows and exchanges the code: the tokens and the
 * jar. A browser already signed in that allowed as much before is sent straight back with a code.
 */
async function codeFlow(who: RegisteredClient = client, jar?: CookieJar, extra: Record<string, string> = {}) {
  const params = oidc(who.client_id, extra)
  let allowed: Response
  if (jar) {
    allowed = jar.take(await ctx.app.request(`/oauth/authorize?${new URLSearchParams(params)}`, {headers: jar.header()}))
    // Signed in, but this client was not allowed yet: the consent page.
    if (allowed.status === 200) {
      const csrf = csrfOf(await allowed.text())
      allowed = jar.take(await ctx.app.request('/oauth/authorize', form({...params, csrf_token: csrf, decision: 'allow'}, {...jar.header(), origin: ORIGIN})))
    }
  } else {
    const signed = await signIn(ctx, params)
    jar = signed.jar
    allowed = jar.take(await ctx.app.request('/oauth/authorize', form({...params, csrf_token: signed.csrf, decision: 'allow'}, {...jar.header(), origin: ORIGIN})))
  }
  expect(allowed.status).toBe(302)
  const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!
  const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: who.client_id, client_secret: who.client_secret})
  expect(res.status).toBe(200)
  return {tokens: (await res.json()) as {access_token: string; id_token: string; refresh_token?: string}, jar}
}

/**
 * Signs in again on the browser of `jar` as `email` (prompt=login, the sign-in form), then the
 * code flow for `who` on that browser: the tokens.
 */
async function signInAgain(jar: CookieJar, who: RegisteredClient = client, email = 'ana@clinic.example') {
  const params = oidc(who.client_id, {prompt: 'login'})
  const page = jar.take(await ctx.app.request(`/oauth/authorize?${new URLSearchParams(params)}`, {headers: jar.header()}))
  expect(page.status).toBe(200)
  const csrf = csrfOf(await page.text())
  const signedIn = jar.take(await ctx.app.request('/oauth/session', form({...params, csrf_token: csrf, email, password: PASSWORD}, {...jar.header(), origin: ORIGIN})))
  expect(signedIn.status).toBe(303)
  return (await codeFlow(who, jar)).tokens
}

async function keys() {
  return createLocalJWKSet((await (await ctx.app.request('/oauth/jwks')).json()) as JSONWebKeySet)
}

/** Verifies a logout token as a relying party must (Back-Channel Logout §2.6); answers its claims. */
async function verifyLogoutToken(token: string, audience = client.client_id) {
  const {payload, protectedHeader} = await jwtVerify(token, await keys(), {
    issuer: ISSUER,
    audience,
    typ: 'logout+jwt',
    currentDate: ctx.clock.now(),
    requiredClaims: ['iat', 'jti', 'sid', 'sub'],
  })
  expect(payload.events).toEqual({[BACKCHANNEL_LOGOUT_EVENT]: {}})
  expect(payload).not.toHaveProperty('nonce')
  return {payload, protectedHeader}
}

async function logOut(idToken: string, jar: CookieJar) {
  const res = jar.take(await ctx.app.request(`/oauth/end_session?${new URLSearchParams({id_token_hint: idToken})}`, {headers: jar.header()}))
  expect(res.status).toBe(200)
}

describe('back-channel logout', () => {
  it('says so in discovery, and ID tokens carry the session sid', async () => {
    const doc = (await (await ctx.app.request('/.well-known/openid-configuration')).json()) as Record<string, unknown>
    expect(doc).toMatchObject({backchannel_logout_supported: true, backchannel_logout_session_supported: true})
    expect(doc.claims_supported).toContain('sid')
    const {tokens} = await codeFlow()
    expect(decodeJwt(tokens.id_token).sid).toMatch(/^[A-Za-z0-9_-]{22}$/)
  })

  it('posts a verifiable logout token naming the ID token sid when the client logs the member out', async () => {
    const {tokens, jar} = await codeFlow()
    const sid = decodeJwt(tokens.id_token).sid
    await logOut(tokens.id_token, jar)
    expect(await worker.drain()).toMatchObject({attempted: 1, delivered: 1})
    expect(receiver.tokens).toHaveLength(1)
    const {payload, protectedHeader} = await verifyLogoutToken(receiver.tokens[0]!)
    expect(payload.sid).toBe(sid)
    expect(payload.sub).toBe(String(memberId))
    expect(protectedHeader.kid).toBe(decodeProtectedHeader(tokens.id_token).kid)
    // Sent once: another round finds nothing.
    expect(await worker.drain()).toMatchObject({attempted: 0})
  })

  it('tells only the clients that got an ID token in that session', async () => {
    const other = await new LogoutReceiver().start()
    try {
      const b = await registerTestClient(ctx.store, {name: 'Beta', redirect_uris: [REDIRECT], backchannel_logout_uri: other.url}, ctx.clock.now())
      // B got an ID token in another browser's session, A in this one; a plain OAuth grant names no session.
      await codeFlow(b)
      const {tokens, jar} = await codeFlow()
      await logOut(tokens.id_token, jar)
      await worker.drain()
      expect(receiver.tokens).toHaveLength(1)
      expect(other.tokens).toHaveLength(0)
      expect(receiver.malformed + other.malformed).toBe(0)
    } finally {
      await other.stop()
    }
  })

  it('retries a client that is down until it takes the token, with the same jti', async () => {
    receiver.status = 503
    const {tokens, jar} = await codeFlow()
    await logOut(tokens.id_token, jar)
    const before = await scrape(ctx.app)
    expect(await worker.drain()).toMatchObject({attempted: 1, delivered: 0})
    const [queued] = await listDeliveries(ctx.db)
    expect(queued).toMatchObject({status: 'pending', attempts: 1, last_status: 503})
    receiver.status = 200
    // Not yet due: the first retry waits 5 seconds.
    expect(await worker.drain()).toMatchObject({attempted: 0})
    ctx.clock.advance(5)
    expect(await worker.drain()).toMatchObject({attempted: 1, delivered: 1})
    const {payload} = await verifyLogoutToken(receiver.tokens[0]!)
    expect(payload.jti).toBe(queued!.id)
    expect((await listDeliveries(ctx.db))[0]).toMatchObject({status: 'delivered', attempts: 2})
    // Each attempt is counted, by outcome, in the registry the worker was given.
    const after = await scrape(ctx.app)
    const attempts = (outcome: string) => moved(before, after, 'medpanel_signon_backchannel_logout_attempts_total', {outcome})
    expect({failed: attempts('failed'), delivered: attempts('delivered'), network_error: attempts('network_error')}).toEqual({failed: 1, delivered: 1, network_error: 0})
  })

  it('sends at once a logout that a killed process of this host had leased, and waits for one a live worker holds', async () => {
    const {tokens, jar} = await codeFlow()
    await logOut(tokens.id_token, jar)
    const [queued] = await listDeliveries(ctx.db)
    const until = iso(new Date(ctx.clock.now().getTime() + 60_000))
    // Leased by a live process (this one, another worker): not sent, not freed.
    await lease(ctx.db, queued!.id, `${hostname()}:${process.pid}:other`, until, iso(ctx.clock.now()))
    expect(await worker.drain()).toMatchObject({attempted: 0})
    expect((await listDeliveries(ctx.db))[0]).toMatchObject({status: 'pending', lease_owner: `${hostname()}:${process.pid}:other`})
    // Leased by a process id that no longer exists: freed and sent in the same drain.
    await updateDelivery(ctx.db, queued!.id, {lease_owner: `${hostname()}:${DEAD_PID}:killed`})
    expect(await worker.drain()).toMatchObject({attempted: 1, delivered: 1})
    expect((await listDeliveries(ctx.db))[0]).toMatchObject({status: 'delivered', lease_owner: null})
    expect(receiver.tokens).toHaveLength(1)
  })

  it('keeps the sid across refreshes, and a logout names it', async () => {
    const {tokens, jar} = await codeFlow(client, undefined, {scope: 'openid profile offline_access'})
    const refreshed = await exchange(ctx, {grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client.client_id, client_secret: client.client_secret})
    expect(refreshed.status).toBe(200)
    const second = (await refreshed.json()) as {id_token: string}
    expect(decodeJwt(second.id_token).sid).toBe(decodeJwt(tokens.id_token).sid)
    await logOut(second.id_token, jar)
    await worker.drain()
    expect((await verifyLogoutToken(receiver.tokens[0]!)).payload.sid).toBe(decodeJwt(tokens.id_token).sid)
  })

  it('tells the client when the member signs out on the applications page', async () => {
    const {tokens, jar} = await codeFlow()
    const page = await (await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})).text()
    const out = jar.take(await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(page)}, {...jar.header(), origin: ORIGIN})))
    expect(out.status).toBe(303)
    await worker.drain()
    expect((await verifyLogoutToken(receiver.tokens[0]!)).payload.sid).toBe(decodeJwt(tokens.id_token).sid)
  })

  it('tells the clients of every session a deactivation or a password change ended', async () => {
    const first = await codeFlow()
    const second = await codeFlow()
    ctx.clock.advance(1)
    await updateMember(ctx.db, memberId, {password: 'a whole new passphrase'}, ctx.clock.now())
    expect(await worker.drain()).toMatchObject({endedSessions: 2, delivered: 2})
    const sids = await Promise.all(receiver.tokens.map(async (token) => (await verifyLogoutToken(token)).payload.sid))
    expect(sids.sort()).toEqual([decodeJwt(first.tokens.id_token).sid, decodeJwt(second.tokens.id_token).sid].sort())
    // A session begun after the change is left alone; the deactivation then ends it too.
    ctx.clock.advance(1)
    const third = await codeFlow(client, (await signIn(ctx, oidc(), undefined, 'a whole new passphrase')).jar)
    expect(await worker.drain()).toMatchObject({endedSessions: 0, attempted: 0})
    ctx.clock.advance(1)
    await updateMember(ctx.db, memberId, {active: false}, ctx.clock.now())
    expect(await worker.drain()).toMatchObject({endedSessions: 1, delivered: 1})
    expect((await verifyLogoutToken(receiver.tokens[2]!)).payload.sid).toBe(decodeJwt(third.tokens.id_token).sid)
  })

  it('tells every client of every session when rotate-secret-key ends them all', async () => {
    const {tokens} = await codeFlow()
    expect(await endEverySession(ctx.db, ctx.clock.now())).toBe(1)
    await worker.drain()
    expect((await verifyLogoutToken(receiver.tokens[0]!)).payload.sid).toBe(decodeJwt(tokens.id_token).sid)
  })

  it('sends one logout token per session end: per sid to a client that requires sid, per member to one that does not', async () => {
    const subReceiver = await new LogoutReceiver().start()
    try {
      const subOnly = await registerTestClient(ctx.store, {name: 'Sub only', redirect_uris: [REDIRECT], backchannel_logout_uri: subReceiver.url}, ctx.clock.now())
      // The member signs in to both clients three times within the same second, in three browsers,
      // and gets two ID tokens for the same client in the last one.
      const sids: unknown[] = []
      let jar: CookieJar | undefined
      for (let i = 0; i < 3; i++) {
        const flow = await codeFlow()
        jar = flow.jar
        sids.push(decodeJwt(flow.tokens.id_token).sid)
        await codeFlow(subOnly, jar)
      }
      await codeFlow(subOnly, jar)
      // Signing out everywhere ends the three sessions at once: one end.
      const page = await (await ctx.app.request('/oauth/authorized_applications', {headers: jar!.header()})).text()
      const out = jar!.take(await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(page), everywhere: 'yes'}, {...jar!.header(), origin: ORIGIN})))
      expect(out.status).toBe(303)
      await worker.drain()
      const queued = await listDeliveries(ctx.db)
      expect(queued.filter((row) => row.client_id === subOnly.client_id)).toHaveLength(1)
      expect(queued.filter((row) => row.client_id === client.client_id)).toHaveLength(3)
      // The client that requires sid hears of each session by its sid ...
      const told = await Promise.all(receiver.tokens.map(async (token) => (await verifyLogoutToken(token)).payload.sid))
      expect(told.sort()).toEqual([...sids].sort())
      // ... the other once, of the member: a token naming sub without a sid covers every session.
      expect(subReceiver.tokens).toHaveLength(1)
      const {payload} = await jwtVerify(subReceiver.tokens[0]!, await keys(), {issuer: ISSUER, audience: subOnly.client_id, typ: 'logout+jwt', currentDate: ctx.clock.now()})
      expect(payload.sub).toBe(String(memberId))
      expect(payload).not.toHaveProperty('sid')
      // One session ending alone still names its sid, for either client.
      ctx.clock.advance(1)
      const single = await codeFlow(subOnly)
      await logOut(single.tokens.id_token, single.jar)
      await worker.drain()
      expect(subReceiver.tokens).toHaveLength(2)
      expect(decodeJwt(subReceiver.tokens[1]!).sid).toBe(decodeJwt(single.tokens.id_token).sid)
    } finally {
      await subReceiver.stop()
    }
  })

  it('keeps the sid when the member signs in again on the same browser, so the session end is told once, not once per sign-in', async () => {
    const first = await codeFlow()
    const sid = decodeJwt(first.tokens.id_token).sid
    let last = first.tokens
    for (let i = 0; i < 3; i++) {
      last = await signInAgain(first.jar)
      expect(decodeJwt(last.id_token).sid).toBe(sid)
    }
    // Signing in again ended no session: nothing is queued.
    expect(await listDeliveries(ctx.db)).toEqual([])
    await logOut(last.id_token, first.jar)
    expect(await listDeliveries(ctx.db)).toHaveLength(1)
    await worker.drain()
    expect(receiver.tokens).toHaveLength(1)
    expect((await verifyLogoutToken(receiver.tokens[0]!)).payload.sid).toBe(sid)
  })

  it('ends the session, and tells its clients, when another member signs in on the same browser', async () => {
    await addMember(ctx.db, {email: 'ben@clinic.example', password: PASSWORD, first_name: 'Ben', last_name: 'Lee', country: 'US', specialty: 'Oncology'}, ctx.clock.now())
    const ana = await codeFlow()
    const ben = await signInAgain(ana.jar, client, 'ben@clinic.example')
    expect(decodeJwt(ben.id_token).sid).not.toBe(decodeJwt(ana.tokens.id_token).sid)
    await worker.drain()
    expect(receiver.tokens).toHaveLength(1)
    const {payload} = await verifyLogoutToken(receiver.tokens[0]!)
    expect(payload).toMatchObject({sid: decodeJwt(ana.tokens.id_token).sid, sub: String(memberId)})
  })

  it('queues nothing for a client without a back-channel logout URI, nor for a plain OAuth grant', async () => {
    const quiet = await registerTestClient(ctx.store, {name: 'Quiet', redirect_uris: [REDIRECT]}, ctx.clock.now())
    const {tokens, jar} = await codeFlow(quiet)
    await logOut(tokens.id_token, jar)
    expect(await listDeliveries(ctx.db)).toEqual([])
    const {jar: plainJar} = await signIn(ctx, authorizeParams(client.client_id))
    const page = await (await ctx.app.request('/oauth/authorized_applications', {headers: plainJar.header()})).text()
    plainJar.take(await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(page)}, {...plainJar.header(), origin: ORIGIN})))
    expect(await listDeliveries(ctx.db)).toEqual([])
  })
})
