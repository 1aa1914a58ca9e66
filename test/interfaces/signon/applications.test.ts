import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {CookieJar, ORIGIN, PASSWORD, bearer, csrfOf, setupClientAndMember, tokenFor} from './flow.js'

describe("the member's authorized applications", () => {
  let ctx: TestContext
  let client: RegisteredClient
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
  })
  afterEach(async () => ctx.store.close())

  async function signedIn(): Promise<{jar: CookieJar; page: string}> {
    const jar = new CookieJar()
    const first = jar.take(await ctx.app.request('/oauth/authorized_applications'))
    const html = await first.text()
    expect(html).toContain('Sign in to see the applications you allowed')
    const res = jar.take(
      await ctx.app.request(
        '/oauth/session',
        form({csrf_token: csrfOf(html), return_to: '/oauth/authorized_applications', email: 'ana@clinic.example', password: PASSWORD}, {...jar.header(), origin: ORIGIN}),
      ),
    )
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/oauth/authorized_applications')
    const page = await jar.take(await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})).text()
    return {jar, page}
  }

  it('lists each allowed client with what it may read and since when; Revoke asks first, and Confirm ends its tokens at once', async () => {
    const token = await tokenFor(ctx, client)
    await ctx.app.request('/user/oauth/token/info', bearer(token))
    const {jar, page} = await signedIn()
    expect(page).toContain('Acme Research')
    expect(page).toContain('name, country of practice and primary specialty')
    expect(page).toMatch(/Allowed since \d{4}-\d{2}-\d{2}/)
    expect(page).toContain(`name="client_id" value="${client.client_id}"`)
    expect(page).not.toContain('<script')

    // Revoke answers a page that asks; nothing is taken back yet.
    const asked = await ctx.app.request('/oauth/authorized_applications/revoke', form({csrf_token: csrfOf(page), client_id: client.client_id}, {...jar.header(), origin: ORIGIN}))
    expect(asked.status).toBe(200)
    expect(asked.headers.get('content-type')).toMatch(/^text\/html/)
    expect(asked.headers.get('cache-control')).toBe('no-store')
    expect(asked.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const confirmation = await asked.text()
    expect(confirmation).toContain('Take access back from Acme Research?')
    expect(confirmation).toContain('Its tokens stop working at once')
    expect(confirmation).toContain('<form method="post" action="/oauth/authorized_applications/revoke">')
    expect(confirmation).toContain(`name="client_id" value="${client.client_id}"`)
    expect(confirmation).toContain('name="confirm" value="yes"')
    expect(confirmation).toMatch(/<button class="primary" type="submit">\s*Confirm\s*<\/button>/)
    expect(confirmation).toMatch(/<a class="button secondary" href="\/oauth\/authorized_applications">\s*Cancel\s*<\/a>/)
    expect(confirmation).not.toContain('<script')
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(200)
    // Anything but confirm=yes only asks again.
    const notYes = await ctx.app.request(
      '/oauth/authorized_applications/revoke',
      form({csrf_token: csrfOf(confirmation), client_id: client.client_id, confirm: 'no'}, {...jar.header(), origin: ORIGIN}),
    )
    expect(notYes.status).toBe(200)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(200)

    const revoked = await ctx.app.request(
      '/oauth/authorized_applications/revoke',
      form({csrf_token: csrfOf(confirmation), client_id: client.client_id, confirm: 'yes'}, {...jar.header(), origin: ORIGIN}),
    )
    expect(revoked.status).toBe(303)
    expect(revoked.headers.get('location')).toBe('/oauth/authorized_applications')
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(401)
    const after = await (await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})).text()
    expect(after).not.toContain('Acme Research')
  })

  it('refuses a post from another site or without the form token, and a client the member never allowed', async () => {
    const token = await tokenFor(ctx, client)
    const {jar, page} = await signedIn()
    const foreign = await ctx.app.request(
      '/oauth/authorized_applications/revoke',
      form({csrf_token: csrfOf(page), client_id: client.client_id}, {...jar.header(), origin: 'https://evil.example'}),
    )
    expect(foreign.status).toBe(403)
    expect(await foreign.text()).toContain('this form was sent from another site (Origin: https://evil.example); only pages of http://localhost may send it')
    const noOrigin = await ctx.app.request('/oauth/authorized_applications/revoke', form({csrf_token: csrfOf(page), client_id: client.client_id}, jar.header()))
    expect(noOrigin.status).toBe(403)
    expect(await noOrigin.text()).toContain('this form was sent without an Origin header')
    const noToken = await ctx.app.request('/oauth/authorized_applications/revoke', form({client_id: client.client_id}, {...jar.header(), origin: ORIGIN}))
    expect(noToken.status).toBe(403)
    const stranger = await ctx.app.request('/oauth/authorized_applications/revoke', form({csrf_token: csrfOf(page), client_id: 'not-allowed'}, {...jar.header(), origin: ORIGIN}))
    expect(stranger.status).toBe(400)
    for (const confirm of [undefined, 'yes']) {
      const fields = {client_id: client.client_id, ...(confirm ? {confirm} : {})}
      const foreignConfirm = await ctx.app.request(
        '/oauth/authorized_applications/revoke',
        form({csrf_token: csrfOf(page), ...fields}, {...jar.header(), origin: 'https://evil.example'}),
      )
      expect(foreignConfirm.status).toBe(403)
      expect((await ctx.app.request('/oauth/authorized_applications/revoke', form(fields, {...jar.header(), origin: ORIGIN}))).status).toBe(403)
    }
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(200)
  })

  it('Sign out ends the sign-in session', async () => {
    const {jar, page} = await signedIn()
    const out = jar.take(await ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(page)}, {...jar.header(), origin: ORIGIN})))
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe('/oauth/authorized_applications')
    const again = await (await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})).text()
    expect(again).toContain('Sign in to see the applications you allowed')
  })

  it("Sign out's return_to leads back only to this service's authorize page", async () => {
    const {jar, page} = await signedIn()
    const signOut = (returnTo: string) => ctx.app.request('/oauth/sign_out', form({csrf_token: csrfOf(page), return_to: returnTo}, {...jar.header(), origin: ORIGIN}))
    const refused = [
      'https://evil.example/oauth/authorize?client_id=x',
      '//evil.example/oauth/authorize?client_id=x',
      '/\\evil.example/oauth/authorize?client_id=x',
      '\\\\evil.example/oauth/authorize?client_id=x',
      'http:/oauth/authorize?client_id=x',
      'javascript:alert(1)//oauth/authorize?',
      '/oauth/authorized_applications',
      '/oauth/authorize/../../evil?client_id=x',
      '/oauth/authorize%2F..?client_id=x',
      '/oauth/authorizex?client_id=x',
      '/oauth/authorize#x',
      ' /oauth/authorize?client_id=x',
      'oauth/authorize?client_id=x',
      '',
    ]
    for (const returnTo of refused) {
      const res = await signOut(returnTo)
      expect(res.status, returnTo).toBe(400)
      expect(res.headers.get('location'), returnTo).toBeNull()
      expect(res.headers.get('content-security-policy'), returnTo).toContain("default-src 'none'")
      expect(await res.text(), returnTo).toContain('return_to must be an address of the authorize page of this service.')
    }
    // Refused before anything changed: still signed in.
    expect(await (await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})).text()).toContain('Applications you allowed')

    // Line breaks cannot split the header, a fragment is dropped, and the address stays relative.
    const folded = await signOut('/oauth/authorize?client_id=x\r\nLocation: https://evil.example/#frag')
    expect(folded.status).toBe(303)
    expect(folded.headers.get('location')).toBe('/oauth/authorize?client_id=xLocation:%20https://evil.example/')
    expect(await (await ctx.app.request('/oauth/authorized_applications', {headers: jar.header()})).text()).toContain('Sign in to see the applications you allowed')
  })

  it('answers 405 with Allow, as an HTML page, for other methods on the sign-out and applications pages', async () => {
    const served: Record<string, string> = {
      '/oauth/sign_out': 'POST',
      '/oauth/authorized_applications': 'GET, HEAD',
      '/oauth/authorized_applications/revoke': 'POST',
      '/oauth/session': 'POST',
    }
    for (const [path, allow] of Object.entries(served)) {
      const method = allow === 'POST' ? 'GET' : 'PUT'
      const res = await ctx.app.request(path, {method})
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.get('allow')).toBe(allow)
      expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    }
  })
})
