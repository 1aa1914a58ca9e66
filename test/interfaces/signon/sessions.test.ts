import {serializeSigned} from 'hono/utils/cookie'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {sha256} from '../../../src/lib/hashing.js'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {addMember, updateMember} from '../../../src/registry/service.js'
import {endEverySession} from '../../../src/interfaces/signon/sessions.js'
import {derivedKey} from '../../../src/store/secrets.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {CookieJar, ORIGIN, PASSWORD, authorizeParams, authorizeUrl, csrfOf, setupClientAndMember} from './flow.js'

const APPLICATIONS = '/oauth/authorized_applications'
const SIGN_IN_FORM = 'name="password"'
const CONSENT_BUTTONS = 'name="decision"'

/**
 * Sign-in sessions live on the server (signin_sessions): the cookie carries only a random id.
 * Sign-out ends the session everywhere a copy of the cookie went; each sign-in gets a new id and
 * ends the one the browser presented.
 */
describe('sign-in sessions kept on the server', () => {
  let ctx: TestContext
  let client: RegisteredClient
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
  })
  afterEach(async () => ctx.store.close())

  /** Signs in from the applications page in the browser `jar` (a new one unless given). */
  async function signIn(jar = new CookieJar(), email = 'ana@clinic.example'): Promise<CookieJar> {
    const page = jar.take(await ctx.app.request(APPLICATIONS, {headers: jar.header()}))
    const html = await page.text()
    // A browser already signed in sees the list; its Sign out form carries the same form token.
    const res = jar.take(
      await ctx.app.request('/oauth/session', form({csrf_token: csrfOf(html), return_to: APPLICATIONS, email, password: PASSWORD}, {...jar.header(), origin: ORIGIN})),
    )
    expect(res.status).toBe(303)
    return jar
  }

  const applications = async (headers: Record<string, string>) => (await ctx.app.request(APPLICATIONS, {headers})).text()
  const consent = async (headers: Record<string, string>) => (await ctx.app.request(authorizeUrl(authorizeParams(client.client_id)), {headers})).text()
  const signedIn = async (headers: Record<string, string>) => {
    const list = await applications(headers)
    const page = await consent(headers)
    // Both pages must agree: signed in shows the list and the consent buttons, else the sign-in form.
    expect(list.includes(SIGN_IN_FORM)).toBe(!page.includes(CONSENT_BUTTONS))
    return page.includes(CONSENT_BUTTONS)
  }
  const sessionCookie = (headers: Record<string, string>) => /mp_session=([^;]+)/.exec(headers.cookie ?? '')?.[1]

  it('sign-out ends the session on the server: a copy of the cookie saved before opens neither page', async () => {
    const jar = await signIn()
    const saved = jar.header()
    expect(await signedIn(saved)).toBe(true)

    const out = jar.take(await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(await applications(saved))}, {...saved, origin: ORIGIN})))
    expect(out.status).toBe(303)
    expect(out.headers.getSetCookie().join('\n')).toMatch(/mp_session=;.*Max-Age=0/i)

    // The saved copy (session and form-token cookies both) is a signed-out browser now.
    expect(await applications(saved)).toContain('Sign in to see the applications you allowed')
    expect(await consent(saved)).toContain(SIGN_IN_FORM)
    expect(await consent(saved)).not.toContain(CONSENT_BUTTONS)
    const params = authorizeParams(client.client_id)
    const decided = await ctx.app.request('/oauth/authorize', form({...params, csrf_token: csrfOf(await consent(saved)), decision: 'allow'}, {...saved, origin: ORIGIN}))
    expect(decided.status).toBe(401)
    expect(await decided.text()).toContain(SIGN_IN_FORM)
  })

  it('a sign-in ends the session the browser presented and issues a new id; a session in another browser stays', async () => {
    const browser = await signIn()
    const first = browser.header()
    const elsewhere = await signIn()
    expect(await signedIn(first)).toBe(true)

    ctx.clock.advance(1)
    await signIn(browser)
    const second = browser.header()
    expect(sessionCookie(second)).toBeDefined()
    expect(sessionCookie(second)).not.toBe(sessionCookie(first))
    expect(await signedIn(first)).toBe(false)
    expect(await signedIn(second)).toBe(true)
    expect(await signedIn(elsewhere.header())).toBe(true)
  })

  it("signing in as someone else in the same browser ends the first member's session there", async () => {
    await addMember(
      ctx.db,
      {email: 'ben@clinic.example', password: PASSWORD, first_name: 'Ben', last_name: 'Ode', country: 'US', specialty: 'Cardiology', npi: null},
      ctx.clock.now(),
    )
    const browser = await signIn()
    const ana = browser.header()
    await signIn(browser, 'ben@clinic.example')
    expect(await signedIn(ana)).toBe(false)
    expect(await applications(browser.header())).toContain('Ben Ode')
  })

  it('refuses a signed cookie of the old memberId.issuedAt form, which earlier releases trusted alone', async () => {
    // Signed with the store's real cookie key: only its form is old.
    const secret = derivedKey(ctx.store.keys, 'sign-in cookies').toString('base64url')
    const old = await serializeSigned('mp_session', `1.${ctx.clock.now().getTime()}`, secret, {path: '/oauth'})
    const headers = {cookie: old.split(';')[0]!}
    expect(await applications(headers)).toContain('Sign in to see the applications you allowed')
    expect(await consent(headers)).toContain(SIGN_IN_FORM)
  })

  it('a session lasts 12 hours from sign-in, then the member signs in again', async () => {
    const jar = await signIn()
    ctx.clock.advance(12 * 3600 - 1)
    expect(await signedIn(jar.header())).toBe(true)
    ctx.clock.advance(1)
    expect(await signedIn(jar.header())).toBe(false)
  })

  it('a password change or a deactivation still ends sessions begun before it', async () => {
    const jar = await signIn()
    ctx.clock.advance(1)
    await updateMember(ctx.db, 1, {password: 'a brand new password'}, ctx.clock.now())
    expect(await signedIn(jar.header())).toBe(false)

    ctx.clock.advance(1)
    await updateMember(ctx.db, 1, {password: PASSWORD}, ctx.clock.now())
    ctx.clock.advance(1)
    const again = await signIn()
    expect(await signedIn(again.header())).toBe(true)
    ctx.clock.advance(1)
    await updateMember(ctx.db, 1, {active: false}, ctx.clock.now())
    await updateMember(ctx.db, 1, {active: true}, ctx.clock.now())
    expect(await signedIn(again.header())).toBe(false)
  })

  it('stores only a hash of the id; ended and expired sessions are swept at the next sign-in', async () => {
    const ended = await signIn()
    const id = decodeURIComponent(sessionCookie(ended.header())!).split('.')[0]!
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const rows = () => ctx.db.selectFrom('signin_sessions').selectAll().orderBy('created_at').execute()
    const [row] = await rows()
    expect(row).toMatchObject({id_hash: sha256(id), member_id: 1, ended_at: null})
    expect(JSON.stringify(await rows())).not.toContain(id)

    await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(await applications(ended.header()))}, {...ended.header(), origin: ORIGIN}))
    expect((await rows())[0]!.ended_at).not.toBeNull()
    ctx.clock.advance(1)
    await signIn()
    expect(await rows()).toHaveLength(1) // the ended one went
    ctx.clock.advance(12 * 3600)
    const last = await signIn()
    expect(await rows()).toHaveLength(1) // the expired one went
    expect(await signedIn(last.header())).toBe(true)
  })

  it('ends every live session at once when the store key is rotated (a leaked key could sign cookies)', async () => {
    const one = (await signIn()).header()
    const two = (await signIn()).header()
    expect(await signedIn(one)).toBe(true)
    expect(await endEverySession(ctx.db, ctx.clock.now())).toBe(2)
    expect(await signedIn(one)).toBe(false)
    expect(await signedIn(two)).toBe(false)
    // Signing in again works as before.
    expect(await signedIn((await signIn()).header())).toBe(true)
  })

  it('keeps the cookie HttpOnly, SameSite=Lax and scoped to /oauth', async () => {
    const jar = new CookieJar()
    const html = await jar.take(await ctx.app.request(APPLICATIONS)).text()
    const res = await ctx.app.request(
      '/oauth/session',
      form({csrf_token: csrfOf(html), return_to: APPLICATIONS, email: 'ana@clinic.example', password: PASSWORD}, {...jar.header(), origin: ORIGIN}),
    )
    const cookie = res.headers.getSetCookie().find((line) => line.startsWith('mp_session='))!
    expect(cookie).toMatch(/; HttpOnly/)
    expect(cookie).toMatch(/; SameSite=Lax/)
    expect(cookie).toMatch(/; Path=\/oauth/)
    expect(cookie).toMatch(/; Max-Age=43200/)
  })
})
