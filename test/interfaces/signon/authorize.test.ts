import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {freshApp, form, type TestContext} from '../../helpers/app.js'
import {registerClient, updateClient, updateMember} from '../../../src/registry/service.js'
import {ORIGIN, REDIRECT, authorizeParams, authorizeUrl, csrfOf, decide, setupClientAndMember, signIn, CookieJar} from './flow.js'

describe('GET /oauth/authorize and the consent page', () => {
  let ctx: TestContext
  let clientId: string
  beforeEach(async () => {
    ctx = await freshApp()
    clientId = (await setupClientAndMember(ctx)).client.client_id
  })
  afterEach(async () => ctx.store.close())

  it('shows a no-JavaScript sign-in form with email and password, and a CSRF token', async () => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(clientId)))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/text\/html/)
    const html = await res.text()
    expect(html).toContain('name="email"')
    expect(html).toContain('name="password"')
    expect(html).not.toContain('<script')
    expect(csrfOf(html)).toHaveLength(32)
    const cookies = res.headers.getSetCookie().join('\n')
    expect(cookies).toMatch(/HttpOnly/)
    expect(cookies).toMatch(/SameSite=Lax/)
  })

  it('after sign-in shows the client name, logo and URL with allow and deny buttons named decision', async () => {
    const params = authorizeParams(clientId)
    const {jar, res} = await signIn(ctx, params)
    expect(res.status).toBe(303)
    const page = await ctx.app.request(authorizeUrl(params), {headers: jar.header()})
    const html = await page.text()
    expect(html).toContain('Acme Research')
    expect(html).toContain('https://client.example/logo.png')
    expect(html).toMatch(/name="decision" value="allow"/)
    expect(html).toMatch(/name="decision" value="deny"/)
  })

  it('names medpanel above the client, links to the applications page, and draws the logo as a background, never an <img>', async () => {
    const params = authorizeParams(clientId)
    const {jar} = await signIn(ctx, params)
    const html = await (await ctx.app.request(authorizeUrl(params), {headers: jar.header()})).text()
    expect(html).toContain('medpanel · sign in with your medpanel membership')
    expect(html.indexOf('medpanel · sign in')).toBeLessThan(html.indexOf('<h1>Acme Research</h1>'))
    expect(html).toMatch(/You can <a href="\/oauth\/authorized_applications">withdraw this access at any time<\/a>\./)
    // A logo that fails to load must not leave a broken-image icon: no <img>, a background instead.
    expect(html).not.toContain('<img')
    expect(html).toContain('<span class="logo" aria-hidden="true" style="background-image:url(&quot;https://client.example/logo.png&quot;)"></span>')
  })

  it("writes the client's logo address into the page's CSS so that it cannot leave its string", async () => {
    const odd = await registerClient(
      ctx.store,
      {name: 'Odd', url: 'https://odd.example', logo_url: 'https://odd.example/a"b\\c) d.png?q=\\");x:url(1)\'é', redirect_uris: [REDIRECT]},
      ctx.clock.now(),
    )
    const params = authorizeParams(odd.client_id)
    const {jar} = await signIn(ctx, params)
    const html = await (await ctx.app.request(authorizeUrl(params), {headers: jar.header()})).text()
    const style = /<span class="logo" aria-hidden="true" style="([^"]*)"><\/span>/
      .exec(html)?.[1]
      ?.replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
    // The URL as browsers normalise it; the backslash a query keeps is written as a CSS escape.
    expect(style).toBe('background-image:url("https://odd.example/a%22b/c)%20d.png?q=\\5c %22);x:url(1)%27%C3%A9")')
  })

  it('Not you? signs out and comes back to the same authorize request, at its sign-in form', async () => {
    const params = authorizeParams(clientId, {scope: 'profile', state: 'a b&c=d'})
    const {jar} = await signIn(ctx, params)
    const html = await (await ctx.app.request(authorizeUrl(params), {headers: jar.header()})).text()
    const signOutForm = /<form method="post" action="\/oauth\/sign_out">([\s\S]*?)<\/form>/.exec(html)?.[1] ?? ''
    expect(signOutForm).toMatch(/Not you\?\s*<button class="link" type="submit">\s*Sign out\s*<\/button>/)
    const returnTo = /name="return_to" value="([^"]*)"/.exec(signOutForm)?.[1]?.replace(/&amp;/g, '&')
    expect(returnTo).toBe(authorizeUrl(params))
    const out = jar.take(await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(signOutForm), return_to: returnTo!}, {...jar.header(), origin: ORIGIN})))
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe(authorizeUrl(params))
    const back = await (await ctx.app.request(out.headers.get('location')!, {headers: jar.header()})).text()
    expect(back).toContain('Sign in to continue to Acme Research')
    expect(back).not.toContain('name="decision"')
  })

  it('allow redirects to the exact redirect URI with a code and the state unchanged', async () => {
    const location = await decide(ctx, authorizeParams(clientId, {state: 'a b&c=d/é'}))
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(location.searchParams.get('state')).toBe('a b&c=d/é')
  })

  it('deny redirects with error=access_denied, a description and the state', async () => {
    const location = await decide(ctx, authorizeParams(clientId), 'deny')
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect(location.searchParams.get('error_description')).toBeTruthy()
    expect(location.searchParams.get('state')).toBe('st-123')
    expect(location.searchParams.get('code')).toBeNull()
  })

  it.each([
    ['unknown client', {client_id: 'nope'}],
    ['redirect URI with an extra path', {redirect_uri: `${REDIRECT}/more`}],
    ['redirect URI with a trailing slash', {redirect_uri: `${REDIRECT}/`}],
    ['redirect URI with another query', {redirect_uri: `${REDIRECT}?x=1`}],
    ['redirect URI on another host', {redirect_uri: 'https://evil.example/callback'}],
    ['missing redirect URI', {redirect_uri: ''}],
  ])('never redirects for %s: shows an error page instead', async (_, override) => {
    const params = {...authorizeParams(clientId), ...override}
    const res = await ctx.app.request(authorizeUrl(params))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    expect(await res.text()).toMatch(/cannot continue/)
  })

  it('shows an error page for a repeated parameter', async () => {
    const res = await ctx.app.request(`${authorizeUrl(authorizeParams(clientId))}&client_id=${clientId}`)
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  it('shows an error page for an expired client', async () => {
    await updateClient(ctx.store, clientId, {expire: true}, ctx.clock.now())
    const res = await ctx.app.request(authorizeUrl(authorizeParams(clientId)))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
  })

  it.each([
    ['response_type=token', {response_type: 'token'}, 'unsupported_response_type'],
    ['missing response_type', {response_type: ''}, 'unsupported_response_type'],
    ['an unknown scope', {scope: 'profile admin'}, 'invalid_scope'],
    ['PKCE method plain', {code_challenge: 'x'.repeat(43), code_challenge_method: 'plain'}, 'invalid_request'],
    ['a malformed PKCE challenge', {code_challenge: 'short', code_challenge_method: 'S256'}, 'invalid_request'],
  ])('redirects back with an error for %s (client and redirect URI are valid)', async (_, override, error) => {
    const res = await ctx.app.request(authorizeUrl({...authorizeParams(clientId), ...override}))
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe(error)
    expect(location.searchParams.get('state')).toBe('st-123')
  })

  it('rejects a wrong password with the sign-in page again, and signs nobody in', async () => {
    const params = authorizeParams(clientId)
    const {jar, res} = await signIn(ctx, params, 'ana@clinic.example', 'wrong password')
    expect(res.status).toBe(401)
    expect(await res.text()).toMatch(/not correct/)
    const again = await ctx.app.request(authorizeUrl(params), {headers: jar.header()})
    expect(await again.text()).toContain('name="password"')
  })

  it('does not let an inactive member sign in, and answers exactly as for a wrong password (the form never confirms a password)', async () => {
    await updateMember(ctx.db, 1, {active: false}, ctx.clock.now())
    const {res} = await signIn(ctx, authorizeParams(clientId))
    expect(res.status).toBe(401)
    const text = await res.text()
    expect(text).toContain('e-mail or password is not correct')
    expect(text).not.toMatch(/not active/)
  })

  it('refuses the consent form without the CSRF token, or from another origin', async () => {
    const params = authorizeParams(clientId)
    const {jar, csrf} = await signIn(ctx, params)
    const noToken = await ctx.app.request('/oauth/authorize', form({...params, decision: 'allow'}, {...jar.header(), origin: ORIGIN}))
    expect(noToken.status).toBe(403)
    expect(noToken.headers.get('location')).toBeNull()
    const wrongToken = await ctx.app.request('/oauth/authorize', form({...params, decision: 'allow', csrf_token: 'x'.repeat(32)}, {...jar.header(), origin: ORIGIN}))
    expect(wrongToken.status).toBe(403)
    const crossSite = await ctx.app.request('/oauth/authorize', form({...params, decision: 'allow', csrf_token: csrf}, {...jar.header(), origin: 'https://evil.example'}))
    expect(crossSite.status).toBe(403)
  })

  it('asks to sign in again when the consent form arrives without a session', async () => {
    const params = authorizeParams(clientId)
    const jar = new CookieJar()
    const page = jar.take(await ctx.app.request(authorizeUrl(params)))
    const csrf = csrfOf(await page.text())
    const res = await ctx.app.request('/oauth/authorize', form({...params, decision: 'allow', csrf_token: csrf}, {...jar.header(), origin: ORIGIN}))
    expect(res.status).toBe(401)
    expect(await res.text()).toContain('name="password"')
  })

  it('ends the browser session when the member changes password', async () => {
    const params = authorizeParams(clientId)
    const {jar} = await signIn(ctx, params)
    ctx.clock.advance(1)
    await updateMember(ctx.db, 1, {password: 'a brand new password'}, ctx.clock.now())
    const page = await ctx.app.request(authorizeUrl(params), {headers: jar.header()})
    expect(await page.text()).toContain('name="password"')
  })

  it('answers other methods with 405', async () => {
    const res = await ctx.app.request('/oauth/authorize', {method: 'DELETE'})
    expect(res.status).toBe(405)
  })
})
