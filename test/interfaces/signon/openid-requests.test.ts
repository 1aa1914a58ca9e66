import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {authorizeParams, CookieJar, csrfOf, exchange, getCode, ORIGIN, PASSWORD, REDIRECT, setupClientAndMember} from './flow.js'

/*
 * What OpenID Connect Core and the RFCs ask that relying parties send with their defaults, beside
 * the seed's wire format where no OpenID request is made: expires_in left out (not null) for a
 * token that never expires, unknown scopes ignored, the authorization endpoint by POST, the
 * UserInfo token in a form body, and revocation of any unknown token answered 200.
 */

let ctx: TestContext
let client: RegisteredClient

beforeEach(async () => {
  ctx = await freshApp()
  client = (await setupClientAndMember(ctx, {token_ttl: null})).client
})
afterEach(async () => ctx.store.close())

const secret = () => ({client_id: client.client_id, client_secret: client.client_secret})

async function tokens(scope: string): Promise<Record<string, unknown>> {
  const code = await getCode(ctx, client.client_id, {scope})
  const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()})
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

describe('expires_in of a token that never expires', () => {
  it('is left out on an OpenID request', async () => {
    const answer = await tokens('openid profile')
    expect(answer).not.toHaveProperty('expires_in')
    expect(answer.id_token).toEqual(expect.any(String))
  })

  it('stays null on a plain OAuth request, as the seed has it', async () => {
    expect(await tokens('profile')).toMatchObject({expires_in: null})
  })
})

describe('scopes', () => {
  it('ignores unknown values on an OpenID request and grants the rest', async () => {
    const answer = await tokens('openid profile address phone made_up')
    expect(answer.scope).toBe('openid profile')
  })

  it('keeps refusing unknown values without openid', async () => {
    const res = await ctx.app.request(`/oauth/authorize?${new URLSearchParams(authorizeParams(client.client_id, {scope: 'profile address'}))}`)
    const location = new URL(res.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe('invalid_scope')
    expect(location.searchParams.get('error_description')).toBe('unknown scope: address')
  })
})

describe('the authorization endpoint by POST', () => {
  it('takes a form-encoded authorization request from any site, as by GET', async () => {
    const jar = new CookieJar()
    const res = jar.take(await ctx.app.request('/oauth/authorize', form(authorizeParams(client.client_id, {scope: 'openid profile'}), {origin: 'https://client.example'})))
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain('action="/oauth/session"')
    // The sign-in it shows works as usual and comes back to the request by GET.
    const signedIn = jar.take(
      await ctx.app.request(
        '/oauth/session',
        form(
          {...authorizeParams(client.client_id, {scope: 'openid profile'}), csrf_token: csrfOf(html), email: 'ana@clinic.example', password: PASSWORD},
          {...jar.header(), origin: ORIGIN},
        ),
      ),
    )
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get('location')).toMatch(/^\/oauth\/authorize\?/)
  })

  it('answers errors the same as GET: to the client once it is proven', async () => {
    const res = await ctx.app.request('/oauth/authorize', form({...authorizeParams(client.client_id), response_type: 'token'}, {origin: 'https://client.example'}))
    expect(res.status).toBe(302)
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('unsupported_response_type')
  })

  it("still refuses the consent page's own form from another site", async () => {
    const res = await ctx.app.request('/oauth/authorize', form({...authorizeParams(client.client_id), csrf_token: 'x', decision: 'allow'}, {origin: 'https://evil.example'}))
    expect(res.status).toBe(403)
  })
})

describe('UserInfo', () => {
  it('takes the access token in a form body (RFC 6750 §2.2)', async () => {
    const {access_token} = (await tokens('openid profile')) as {access_token: string}
    const res = await ctx.app.request('/oauth/userinfo', form({access_token}))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({given_name: 'Ana'})
  })

  it('refuses it in the query, and in the header and the body at once', async () => {
    const {access_token} = (await tokens('openid profile')) as {access_token: string}
    expect((await ctx.app.request(`/oauth/userinfo?access_token=${access_token}`)).status).toBe(401)
    const both = await ctx.app.request('/oauth/userinfo', form({access_token}, {authorization: `Bearer ${access_token}`}))
    expect(both.status).toBe(401)
    expect(((await both.json()) as {error_description: string}).error_description).toMatch(/not both/)
  })
})

describe('revocation', () => {
  it('answers 200 for any token it does not know, however long', async () => {
    for (const length of [513, 700, 4096, 12_000]) {
      const res = await ctx.app.request('/oauth/revoke', form({token: 'x'.repeat(length), ...secret()}))
      expect(res.status, String(length)).toBe(200)
    }
  })

  it('answers 200 for an ID token, and revokes nothing with it', async () => {
    const answer = (await tokens('openid profile')) as {access_token: string; id_token: string}
    expect((await ctx.app.request('/oauth/revoke', form({token: answer.id_token, ...secret()}))).status).toBe(200)
    expect((await ctx.app.request('/oauth/token/info', {headers: {authorization: `Bearer ${answer.access_token}`}})).status).toBe(200)
  })
})
