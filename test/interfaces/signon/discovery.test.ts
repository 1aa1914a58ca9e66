import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {authorizeParams, bearer, decide, setupClientAndMember, tokenFor} from './flow.js'
import {clientBasic} from '../../helpers/http-basic.js'
import {registerTestClient} from '../../helpers/clients.js'

const ISSUER = 'http://localhost'

describe('discovery, iss, revocation and introspection', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let other: RegisteredClient
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
    other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: ['https://client.example/callback'], token_ttl: 600}, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const basic = (c: RegisteredClient) => ({authorization: clientBasic(c)})

  it('publishes RFC 8414 metadata for its issuer, cacheable', async () => {
    const res = await ctx.app.request('/.well-known/oauth-authorization-server')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600')
    expect(await res.json()).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/oauth/token`,
      revocation_endpoint: `${ISSUER}/oauth/revoke`,
      introspection_endpoint: `${ISSUER}/oauth/introspect`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      token_endpoint_auth_signing_alg_values_supported: ['ES256', 'PS256', 'RS256'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access', 'pulses'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${ISSUER}/docs`,
    })
  })

  it('names the issuer (iss, RFC 9207) on every redirect back to the client: code, denial and error', async () => {
    const allowed = await decide(ctx, authorizeParams(client.client_id), 'allow')
    expect(allowed.searchParams.get('iss')).toBe(ISSUER)
    expect(allowed.searchParams.get('code')).toBeTruthy()
    const denied = await decide(ctx, authorizeParams(client.client_id), 'deny')
    expect(denied.searchParams.get('iss')).toBe(ISSUER)
    expect(denied.searchParams.get('error')).toBe('access_denied')
    const bad = await ctx.app.request(`/oauth/authorize?${new URLSearchParams(authorizeParams(client.client_id, {scope: 'everything'}))}`)
    expect(bad.status).toBe(302)
    const location = new URL(bad.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe('invalid_scope')
    expect(location.searchParams.get('iss')).toBe(ISSUER)
  })

  it("revokes the calling client's token at once; another client's token, an unknown or an empty one changes nothing and answers the same", async () => {
    const mine = await tokenFor(ctx, client)
    const theirs = await tokenFor(ctx, other)
    // An empty token is what simple-oauth2's revokeAll() sends for a refresh token it never got.
    for (const token of [theirs, 'no-such-token', '']) {
      const res = await ctx.app.request('/oauth/revoke', form({token}, basic(client)))
      expect(res.status).toBe(200)
      // An empty JSON object, typed as JSON: simple-oauth2 refuses any answer that is not.
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await res.text()).toBe('{}')
    }
    expect((await ctx.app.request('/user/oauth/token/info', bearer(theirs))).status).toBe(200)
    const revoked = await ctx.app.request('/oauth/revoke', form({token: mine, token_type_hint: 'access_token', client_id: client.client_id, client_secret: client.client_secret}))
    expect(revoked.status).toBe(200)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(mine))).status).toBe(401)
    expect((await ctx.app.request('/user/oauth/user/info', bearer(mine))).status).toBe(401)
  })

  it('takes token_type_hint as advice: an unknown hint still revokes the token (RFC 7009 §2.1)', async () => {
    for (const hint of ['foo', 'refresh_token', 'id_token']) {
      const mine = await tokenFor(ctx, client)
      const res = await ctx.app.request('/oauth/revoke', form({token: mine, token_type_hint: hint}, basic(client)))
      expect(res.status).toBe(200)
      expect((await ctx.app.request('/user/oauth/token/info', bearer(mine))).status).toBe(401)
    }
  })

  it("answers 405 with Allow, in OAuth's shape, for other methods on revoke, introspect and token", async () => {
    for (const path of ['/oauth/revoke', '/oauth/introspect', '/oauth/token']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await ctx.app.request(path, {method})
        expect(res.status, `${method} ${path}`).toBe(405)
        expect(res.headers.get('allow')).toBe('POST')
        expect(((await res.json()) as {error: string}).error).toBe('invalid_request')
      }
    }
  })

  it('refuses a missing token and a wrong secret, in the OAuth error shape', async () => {
    const missing = await ctx.app.request('/oauth/introspect', form({}, basic(client)))
    expect(((await missing.json()) as {error: string}).error).toBe('invalid_request')
    const noToken = await ctx.app.request('/oauth/revoke', form({token_type_hint: 'refresh_token'}, basic(client)))
    expect(noToken.status).toBe(400)
    expect(((await noToken.json()) as {error: string}).error).toBe('invalid_request')
    const wrong = await ctx.app.request('/oauth/introspect', form({token: 'x'}, basic({...client, client_secret: 'wrong'})))
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic /)
  })

  it('introspects the calling client\'s live token, and says only {"active": false} of anything else', async () => {
    const mine = await tokenFor(ctx, client)
    const theirs = await tokenFor(ctx, other)
    const live = (await (await ctx.app.request('/oauth/introspect', form({token: mine}, basic(client)))).json()) as Record<string, unknown>
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    expect(live).toEqual({active: true, scope: 'profile', client_id: client.client_id, token_type: 'bearer', iat: now, exp: now + 3600, sub: '1'})
    for (const token of [theirs, 'no-such-token']) {
      expect(await (await ctx.app.request('/oauth/introspect', form({token}, basic(client)))).json()).toEqual({active: false})
    }
    await ctx.app.request('/oauth/revoke', form({token: mine}, basic(client)))
    expect(await (await ctx.app.request('/oauth/introspect', form({token: mine}, basic(client)))).json()).toEqual({active: false})
  })

  it('says exp exactly: iat plus the lifetime, whatever fraction of a second the token was made or asked at', async () => {
    ctx.clock.advance(0.5)
    const mine = await tokenFor(ctx, client)
    // Asked 100.2 s later: what is left (3,499.8 s) rounds up, and counting from now once said iat + ttl + 1.
    ctx.clock.advance(100.2)
    const live = (await (await ctx.app.request('/oauth/introspect', form({token: mine}, basic(client)))).json()) as {iat: number; exp: number}
    expect(live.exp - live.iat).toBe(3600)
  })
})
