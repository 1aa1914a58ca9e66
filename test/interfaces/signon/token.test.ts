import {createHash} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import type {RegisteredClient} from '../../../src/registry/service.js'
import {REDIRECT, bearer, exchange, getCode, setupClientAndMember} from './flow.js'
import {basicAuth, clientBasic} from '../../helpers/http-basic.js'
import {registerTestClient} from '../../helpers/clients.js'

const verifier = `${'v'.repeat(20)}erifier-with-enough-entropy-1234567890`
const challenge = createHash('sha256').update(verifier).digest('base64url')

describe('POST /oauth/token', () => {
  let ctx: TestContext
  let client: RegisteredClient
  const grant = (code: string, extra: Record<string, string | string[]> = {}) => ({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: client.client_id,
    client_secret: client.client_secret,
    ...extra,
  })
  beforeEach(async () => {
    ctx = await freshApp()
    client = (await setupClientAndMember(ctx)).client
  })
  afterEach(async () => ctx.store.close())

  async function expectError(res: Response, status: number, error: string) {
    expect(res.status).toBe(status)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, string>
    expect(body.error).toBe(error)
    expect(body.error_description).toBeTruthy()
    return body
  }

  it('exchanges a code for a bearer token, uncached', async () => {
    const res = await exchange(ctx, grant(await getCode(ctx, client.client_id)))
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({token_type: 'bearer', expires_in: 3600, scope: 'profile'})
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('gives expires_in null to a client whose tokens never expire', async () => {
    const forever = await registerTestClient(ctx.store, {name: 'Forever', redirect_uris: [REDIRECT]}, ctx.clock.now())
    const code = await getCode(ctx, forever.client_id)
    const res = await exchange(ctx, {...grant(code), client_id: forever.client_id, client_secret: forever.client_secret})
    expect(((await res.json()) as {expires_in: unknown}).expires_in).toBeNull()
  })

  it('accepts client authentication by HTTP Basic', async () => {
    const code = await getCode(ctx, client.client_id)
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT}, {authorization: clientBasic(client)})
    expect(res.status).toBe(200)
  })

  it('a code is single use: the replay fails and revokes the token it issued', async () => {
    const code = await getCode(ctx, client.client_id)
    const first = await exchange(ctx, grant(code))
    const {access_token} = (await first.json()) as {access_token: string}
    expect((await ctx.app.request('/user/oauth/token/info', bearer(access_token))).status).toBe(200)
    const body = await expectError(await exchange(ctx, grant(code)), 400, 'invalid_grant')
    expect(body.error_description).toMatch(/already been used/)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(access_token))).status).toBe(401)
  })

  it("a new allow expires the pair's earlier unused code", async () => {
    const older = await getCode(ctx, client.client_id)
    const newer = await getCode(ctx, client.client_id)
    await expectError(await exchange(ctx, grant(older)), 400, 'invalid_grant')
    expect((await exchange(ctx, grant(newer))).status).toBe(200)
  })

  it('codes live ten minutes', async () => {
    const code = await getCode(ctx, client.client_id)
    ctx.clock.advance(601)
    await expectError(await exchange(ctx, grant(code)), 400, 'invalid_grant')
  })

  it('a code is bound to its client and redirect URI', async () => {
    const other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: [REDIRECT]}, ctx.clock.now())
    const code = await getCode(ctx, client.client_id)
    await expectError(await exchange(ctx, {...grant(code), client_id: other.client_id, client_secret: other.client_secret}), 400, 'invalid_grant')
    await expectError(await exchange(ctx, grant(code, {redirect_uri: `${REDIRECT}/other`})), 400, 'invalid_grant')
    // Neither failed attempt consumed it.
    expect((await exchange(ctx, grant(code))).status).toBe(200)
  })

  it('rejects unknown, garbled and empty codes with invalid_grant', async () => {
    await expectError(await exchange(ctx, grant('not-a-code')), 400, 'invalid_grant')
    await expectError(await exchange(ctx, grant('x'.repeat(256))), 400, 'invalid_grant')
    await expectError(await exchange(ctx, grant('')), 400, 'invalid_request')
  })

  describe('PKCE (S256)', () => {
    it('accepts the matching verifier', async () => {
      const code = await getCode(ctx, client.client_id, {code_challenge: challenge, code_challenge_method: 'S256'})
      expect((await exchange(ctx, grant(code, {code_verifier: verifier}))).status).toBe(200)
    })
    it('rejects a wrong or missing verifier', async () => {
      const code = await getCode(ctx, client.client_id, {code_challenge: challenge, code_challenge_method: 'S256'})
      await expectError(await exchange(ctx, grant(code)), 400, 'invalid_grant')
      await expectError(await exchange(ctx, grant(code, {code_verifier: verifier.replace('v', 'w')})), 400, 'invalid_grant')
      expect((await exchange(ctx, grant(code, {code_verifier: verifier}))).status).toBe(200)
    })
    it('rejects a verifier for a code issued without a challenge, and a malformed verifier', async () => {
      const code = await getCode(ctx, client.client_id)
      await expectError(await exchange(ctx, grant(code, {code_verifier: verifier})), 400, 'invalid_grant')
      await expectError(await exchange(ctx, grant(code, {code_verifier: 'short'})), 400, 'invalid_request')
    })
  })

  describe('client authentication', () => {
    it('a wrong secret or unknown client is invalid_client 401', async () => {
      const code = await getCode(ctx, client.client_id)
      await expectError(await exchange(ctx, grant(code, {client_secret: 'wrong'})), 401, 'invalid_client')
      await expectError(await exchange(ctx, grant(code, {client_id: 'unknown'})), 401, 'invalid_client')
      await expectError(await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT}), 401, 'invalid_client')
    })
    it('a malformed Basic header is invalid_client with a Basic challenge', async () => {
      const res = await exchange(ctx, grant('x'), {authorization: 'Basic !!!'})
      await expectError(res, 401, 'invalid_client')
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic/)
    })
    it('a rotated secret is refused at once, though it was accepted the moment before, by Basic and in the form', async () => {
      const {rotateClientSecret} = await import('../../../src/registry/service.js')
      const basic = (secret: string) => ({authorization: basicAuth(client.client_id, secret)})
      const introspect = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
        ctx.app.request('/oauth/introspect', form({token: 'not-a-token', ...fields}, headers))
      // Accepted twice each way, so the second answer is the remembered one.
      for (let i = 0; i < 2; i++) {
        expect((await introspect({}, basic(client.client_secret))).status).toBe(200)
        expect((await introspect({client_id: client.client_id, client_secret: client.client_secret})).status).toBe(200)
      }
      const rotated = await rotateClientSecret(ctx.db, client.client_id, ctx.clock.now())
      await expectError(await introspect({}, basic(client.client_secret)), 401, 'invalid_client')
      await expectError(await introspect({client_id: client.client_id, client_secret: client.client_secret}), 401, 'invalid_client')
      expect((await introspect({}, basic(rotated.client_secret))).status).toBe(200)
      expect((await introspect({client_id: client.client_id, client_secret: rotated.client_secret})).status).toBe(200)
      // Another client never passes with a secret this one was accepted with.
      const other = await registerTestClient(ctx.store, {name: 'Other', redirect_uris: [REDIRECT]}, ctx.clock.now())
      await expectError(await introspect({client_id: other.client_id, client_secret: rotated.client_secret}), 401, 'invalid_client')
    })
    it('an expired client cannot exchange codes', async () => {
      const code = await getCode(ctx, client.client_id)
      const {updateClient} = await import('../../../src/registry/service.js')
      await updateClient(ctx.store, client.client_id, {expire: true}, ctx.clock.now())
      await expectError(await exchange(ctx, grant(code)), 401, 'invalid_client')
    })
  })

  describe('malformed requests', () => {
    it('missing grant_type, code or redirect_uri is invalid_request', async () => {
      const code = await getCode(ctx, client.client_id)
      const {grant_type: _g, ...noGrant} = grant(code)
      await expectError(await exchange(ctx, noGrant), 400, 'invalid_request')
      const {code: _c, ...noCode} = grant(code)
      await expectError(await exchange(ctx, noCode), 400, 'invalid_request')
      const {redirect_uri: _r, ...noRedirect} = grant(code)
      await expectError(await exchange(ctx, noRedirect), 400, 'invalid_request')
    })
    it('an unknown grant type is unsupported_grant_type', async () => {
      await expectError(await exchange(ctx, {...grant('x'), grant_type: 'password'}), 400, 'unsupported_grant_type')
    })
    it('a repeated parameter is invalid_request', async () => {
      const code = await getCode(ctx, client.client_id)
      await expectError(await exchange(ctx, grant(code, {code: [code, code]})), 400, 'invalid_request')
    })
    it('a JSON body is invalid_request', async () => {
      const res = await ctx.app.request('/oauth/token', {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify(grant('x'))})
      await expectError(res, 400, 'invalid_request')
    })
    it('a garbage body is invalid_request, never a 500', async () => {
      // No grant_type can be read from it: RFC 6749 5.2 (a missing parameter) and docs/signon.md's
      // token errors make that invalid_request with 400, not unsupported_grant_type.
      const res = await ctx.app.request('/oauth/token', {method: 'POST', headers: {'content-type': 'application/x-www-form-urlencoded'}, body: '%%%&&&==\u0000\uffff'})
      await expectError(res, 400, 'invalid_request')
    })
    it('a huge body or value is refused', async () => {
      const huge = await exchange(ctx, grant('x'.repeat(20_000)))
      expect(huge.status).toBe(413)
      expect(((await huge.json()) as {error: string}).error).toBe('invalid_request')
      await expectError(await exchange(ctx, grant('x'.repeat(3000))), 400, 'invalid_request')
    })
    it('GET is 405', async () => {
      const res = await ctx.app.request('/oauth/token')
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
    })
  })

  describe('client_credentials', () => {
    it('issues a client token to a client with the pulses grant', async () => {
      const pulses = await registerTestClient(ctx.store, {name: 'Pulse Co', grants: ['pulses']}, ctx.clock.now())
      const res = await exchange(ctx, {grant_type: 'client_credentials', client_id: pulses.client_id, client_secret: pulses.client_secret})
      expect(res.status).toBe(200)
      const body = (await res.json()) as {access_token: string; scope: string}
      expect(body.scope).toBe('pulses')
      const info = (await (await ctx.app.request('/oauth/token/info', bearer(body.access_token))).json()) as Record<string, unknown>
      expect(info).toMatchObject({resource_owner_id: null, application: {uid: pulses.client_id}})
    })
    it('refuses clients without the pulses grant', async () => {
      await expectError(await exchange(ctx, {grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret}), 400, 'unauthorized_client')
    })
  })
})
