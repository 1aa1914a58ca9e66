import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {revokeConsent} from '../../../src/registry/service.js'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {authorizeParams, authorizeUrl, type CookieJar, decide, signIn, setupClientAndMember} from './flow.js'

/*
 * Remembered consent: a member who allowed a client these scopes before goes straight back to it
 * with a code, on a plain OAuth request as on an OpenID one, unless the client asks prompt=consent
 * or asks for more (then the page asks for the new scopes only). Taking the grant back forgets it.
 */

let ctx: TestContext
let client: RegisteredClient
let memberId: number

beforeEach(async () => {
  ctx = await freshApp()
  const setup = await setupClientAndMember(ctx)
  client = setup.client
  memberId = setup.member.user_id
})
afterEach(async () => ctx.store.close())

/** The member's browser, signed in, after allowing `scope` once on the consent page. */
async function allowedOnce(scope: string): Promise<CookieJar> {
  await decide(ctx, authorizeParams(client.client_id, {scope}))
  const {jar} = await signIn(ctx, authorizeParams(client.client_id, {scope}))
  return jar
}

const open = (jar: CookieJar, params: Record<string, string>) => ctx.app.request(authorizeUrl(params), {headers: jar.header()})

describe('remembered consent', () => {
  it('sends a signed-in member straight back with a code for what was allowed before', async () => {
    const jar = await allowedOnce('profile')
    const res = await open(jar, authorizeParams(client.client_id, {scope: 'profile'}))
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.searchParams.get('code')).toBeTruthy()
    expect(location.searchParams.get('state')).toBe('st-123')
  })

  it('also for fewer scopes, and for an OpenID request', async () => {
    const jar = await allowedOnce('openid profile email')
    for (const scope of ['profile', 'openid email']) {
      const res = await open(jar, authorizeParams(client.client_id, {scope}))
      expect(res.status, scope).toBe(302)
    }
  })

  it('shows the page again with prompt=consent', async () => {
    const jar = await allowedOnce('openid profile')
    const res = await open(jar, authorizeParams(client.client_id, {scope: 'openid profile', prompt: 'consent'}))
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('value="allow"')
  })

  it('asks only for a scope not allowed yet', async () => {
    const jar = await allowedOnce('openid profile')
    const res = await open(jar, authorizeParams(client.client_id, {scope: 'openid profile email'}))
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('your e-mail address')
    expect(html).not.toContain('your name, country of practice')
  })

  it('asks again once the member took the grant back', async () => {
    const jar = await allowedOnce('profile')
    await revokeConsent(ctx.db, memberId, client.client_id, ctx.clock.now())
    const res = await open(jar, authorizeParams(client.client_id, {scope: 'profile'}))
    expect(res.status).toBe(200)
    expect(await ctx.db.selectFrom('consents').selectAll().execute()).toEqual([])
  })

  it('answers prompt=none with a code from the remembered consent, with no token left', async () => {
    const jar = await allowedOnce('openid profile')
    await ctx.db.deleteFrom('access_tokens').execute()
    const res = await open(jar, authorizeParams(client.client_id, {scope: 'openid profile', prompt: 'none'}))
    expect(new URL(res.headers.get('location')!).searchParams.get('code')).toBeTruthy()
  })

  it('lets the sign-in form lead to the client: signing in may now go straight back there', async () => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(client.client_id)))
    expect(await res.text()).toContain('type="password"')
    expect(res.headers.get('content-security-policy')).toMatch(/form-action 'self' https:\/\/client\.example(;|$)/)
  })

  it('lists the remembered grant on the applications page, so the member can take it back', async () => {
    const jar = await allowedOnce('openid profile')
    const page = await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})
    expect(await page.text()).toContain('Acme Research')
  })
})
