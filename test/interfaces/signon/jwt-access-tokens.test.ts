import {createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet} from 'jose'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {registerTestClient} from '../../helpers/clients.js'
import {authorizeParams, authorizeUrl, bearer, exchange, getCode, REDIRECT, setupClientAndMember} from './flow.js'

const ISSUER = 'http://localhost'
const API = 'https://api.example/balances'

describe('JWT access tokens (RFC 9068) and resource indicators (RFC 8707)', () => {
  let ctx: TestContext
  let client: RegisteredClient
  let memberId: number
  beforeEach(async () => {
    ctx = await freshApp()
    const setup = await setupClientAndMember(ctx, {access_token_format: 'jwt'})
    client = setup.client
    memberId = setup.member.user_id
  })
  afterEach(async () => ctx.store.close())

  async function codeExchange(who: RegisteredClient, extra: Record<string, string> = {}, scope = 'profile') {
    const code = await getCode(ctx, who.client_id, {scope, nonce: 'n-1'})
    return exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: who.client_id, client_secret: who.client_secret, ...extra})
  }

  async function verify(token: string, audience: string) {
    const jwks = (await (await ctx.app.request('/oauth/jwks')).json()) as JSONWebKeySet
    return jwtVerify(token, createLocalJWKSet(jwks), {issuer: ISSUER, audience, typ: 'at+jwt', currentDate: ctx.clock.now()})
  }

  it('issues a signed at+jwt whose aud is the resource asked for, checkable against the JWKS alone', async () => {
    const res = await codeExchange(client, {resource: API}, 'openid profile')
    expect(res.status).toBe(200)
    const body = (await res.json()) as {access_token: string; expires_in: number; token_type: string}
    expect(body.token_type).toBe('bearer')
    // The client agreed an hour; a JWT lives at most ten minutes.
    expect(body.expires_in).toBe(600)
    const {payload, protectedHeader} = await verify(body.access_token, API)
    expect(protectedHeader.typ).toBe('at+jwt')
    expect(protectedHeader.alg).toBe('RS256')
    const iat = Math.floor(ctx.clock.now().getTime() / 1000)
    expect(payload).toMatchObject({iss: ISSUER, aud: API, sub: String(memberId), client_id: client.client_id, scope: 'openid profile', iat, exp: iat + 600})
    expect(typeof payload.jti).toBe('string')
    // An OpenID sign-in knows when the member signed in.
    expect(typeof payload.auth_time).toBe('number')
  })

  it('names the issuer as the audience when no resource is asked for', async () => {
    const body = (await (await codeExchange(client)).json()) as {access_token: string}
    expect((await verify(body.access_token, ISSUER)).payload.aud).toBe(ISSUER)
  })

  it('works at token info and user info, and token info refuses it once revoked', async () => {
    const {access_token: token} = (await (await codeExchange(client, {resource: API})).json()) as {access_token: string}
    const info = await ctx.app.request('/oauth/token/info', bearer(token))
    expect(info.status).toBe(200)
    expect(((await info.json()) as {resource_owner_id: number}).resource_owner_id).toBe(memberId)
    expect((await ctx.app.request('/oauth/user/info', bearer(token))).status).toBe(200)
    const revoked = await ctx.app.request('/oauth/revoke', form({token, client_id: client.client_id, client_secret: client.client_secret}))
    expect(revoked.status).toBe(200)
    expect((await ctx.app.request('/oauth/token/info', bearer(token))).status).toBe(401)
  })

  it('refuses a resource that is not an absolute URI, or has a fragment, with invalid_target, and spends nothing', async () => {
    for (const resource of ['api/balances', 'https://api.example/x#frag']) {
      const code = await getCode(ctx, client.client_id, {scope: 'profile'})
      const fields = {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret}
      const res = await exchange(ctx, {...fields, resource})
      expect(res.status).toBe(400)
      expect(((await res.json()) as {error: string}).error).toBe('invalid_target')
      // The code was not consumed: the corrected request still gets a token.
      expect((await exchange(ctx, fields)).status).toBe(200)
    }
  })

  it('gives a refresh a new JWT for the resource that refresh names, and refuses a bad one without spending the refresh token', async () => {
    const first = (await (await codeExchange(client, {resource: API}, 'openid profile offline_access')).json()) as {refresh_token: string}
    const fields = {grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client_id, client_secret: client.client_secret}
    const bad = await exchange(ctx, {...fields, resource: 'not a uri'})
    expect(((await bad.json()) as {error: string}).error).toBe('invalid_target')
    const other = 'https://pulses.example/'
    const res = await exchange(ctx, {...fields, resource: other})
    expect(res.status).toBe(200)
    const {payload} = await verify(((await res.json()) as {access_token: string}).access_token, other)
    expect(payload).toMatchObject({aud: other, sub: String(memberId), scope: 'openid profile offline_access'})
  })

  it('takes the resource of the authorization request as the audience when the token request names none', async () => {
    const code = await getCode(ctx, client.client_id, {scope: 'profile', resource: API})
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret})
    expect(res.status).toBe(200)
    expect((await verify(((await res.json()) as {access_token: string}).access_token, API)).payload.aud).toBe(API)
  })

  it('sends a bad resource at the authorization endpoint back to the client as invalid_target', async () => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {scope: 'profile', resource: 'https://api.example/#x'})))
    expect(res.status).toBe(302)
    const back = new URL(res.headers.get('location')!)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    expect(back.searchParams.get('error')).toBe('invalid_target')
    expect(back.searchParams.get('state')).toBe('st-123')
  })

  it('takes one resource per request: a repeated one is invalid_request', async () => {
    const code = await getCode(ctx, client.client_id, {scope: 'profile'})
    const fields = {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret}
    const res = await exchange(ctx, {...fields, resource: [API, 'https://other.example/']})
    expect(res.status).toBe(400)
    expect(((await res.json()) as {error: string}).error).toBe('invalid_request')
  })

  it('gives client_credentials a JWT whose sub is the client', async () => {
    const pulses = await registerTestClient(ctx.store, {name: 'Pulse Co', grants: ['pulses'], access_token_format: 'jwt'}, ctx.clock.now())
    const res = await exchange(ctx, {grant_type: 'client_credentials', client_id: pulses.client_id, client_secret: pulses.client_secret, resource: API})
    expect(res.status).toBe(200)
    const {payload} = await verify(((await res.json()) as {access_token: string}).access_token, API)
    expect(payload).toMatchObject({sub: pulses.client_id, client_id: pulses.client_id, scope: 'pulses'})
  })

  it('leaves an opaque client as it was: a random string, the agreed lifetime', async () => {
    const opaque = await registerTestClient(ctx.store, {name: 'Plain Co', url: 'https://client.example', redirect_uris: [REDIRECT], token_ttl: 3600}, ctx.clock.now())
    const body = (await (await codeExchange(opaque, {resource: API})).json()) as {access_token: string; expires_in: number}
    expect(body.expires_in).toBe(3600)
    expect(body.access_token.split('.')).toHaveLength(1)
    expect(() => decodeProtectedHeader(body.access_token)).toThrow()
  })
})
