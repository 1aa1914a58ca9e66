import {createHash} from 'node:crypto'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {registerClient, rotateClientSecret, updateClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {rejectionOf} from '../../helpers/rejection.js'
import {AppError} from '../../../src/errors.js'
import {authorizeParams, authorizeUrl, decide, exchange, REDIRECT, setupClientAndMember} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'

/*
 * Public clients (RFC 6749 §2.1): browser and native apps registered with
 * token_endpoint_auth_method none. No secret is made; the client names itself with client_id
 * alone; PKCE with S256 is required; a native app's loopback redirect matches on any port (RFC
 * 8252 §7.3) and its private-use scheme is accepted; browser apps read the token endpoint,
 * revocation and UserInfo from their own registered origins (CORS), and from no other.
 */

const VERIFIER = 'public-client-verifier-0123456789abcdefghijklmnopqrstuvwxyz'
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url')
const APP_ORIGIN = 'https://spa.example'
const SPA_REDIRECT = `${APP_ORIGIN}/callback`

let ctx: TestContext
let clientId: string

beforeEach(async () => {
  ctx = await freshApp()
  const {client} = await setupClientAndMember(ctx, {
    token_endpoint_auth_method: 'none',
    redirect_uris: [REDIRECT, SPA_REDIRECT, 'http://127.0.0.1/native', 'com.example.app:/callback'],
  })
  clientId = client.client_id
})
afterEach(async () => ctx.store.close())

/** Another client, confidential unless told otherwise. */
const otherClient = (extra: {redirect_uris?: string[]} = {}) => registerTestClient(ctx.store, {name: 'Other', redirect_uris: [REDIRECT], ...extra}, ctx.clock.now())

const pkce = {code_challenge: CHALLENGE, code_challenge_method: 'S256'}

async function publicCode(redirectUri = REDIRECT): Promise<string> {
  const location = await decide(ctx, {...authorizeParams(clientId, pkce), redirect_uri: redirectUri})
  const code = location.searchParams.get('code')
  if (!code) throw new Error(`no code: ${location}`)
  return code
}

describe('registering a public client', () => {
  it('makes no secret, and says how the client authenticates', async () => {
    const registered = await registerClient(
      ctx.store,
      {name: 'SPA', url: APP_ORIGIN, logo_url: `${APP_ORIGIN}/l.png`, redirect_uris: [SPA_REDIRECT], token_endpoint_auth_method: 'none'},
      ctx.clock.now(),
    )
    expect(registered).not.toHaveProperty('client_secret')
    expect(registered.token_endpoint_auth_method).toBe('none')
    const row = await ctx.db.selectFrom('clients').select('secret_hash').where('id', '=', registered.client_id).executeTakeFirstOrThrow()
    expect(row.secret_hash).toBe('')
  })

  it('keeps client_secret_basic as the default, with a secret', async () => {
    const client = await otherClient()
    expect(client.token_endpoint_auth_method).toBe('client_secret_basic')
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('refuses a private-use scheme for a confidential client, and any grant but signon for a public one', async () => {
    const base = {name: 'App', url: APP_ORIGIN, logo_url: `${APP_ORIGIN}/l.png`}
    expect((await rejectionOf(registerClient(ctx.store, {...base, redirect_uris: ['com.example.app:/callback']}, ctx.clock.now()), AppError)).message).toMatch(
      /private-use URI scheme .* public clients only/,
    )
    expect(
      (
        await rejectionOf(
          registerClient(ctx.store, {...base, redirect_uris: [SPA_REDIRECT], grants: ['signon', 'pulses'], token_endpoint_auth_method: 'none'}, ctx.clock.now()),
          AppError,
        )
      ).message,
    ).toMatch(/public client .* only the signon grant/)
    const confidential = await registerClient(ctx.store, {...base, redirect_uris: [SPA_REDIRECT]}, ctx.clock.now())
    expect((await rejectionOf(updateClient(ctx.store, confidential.client_id, {redirect_uris: ['com.example.app:/cb']}, ctx.clock.now()), AppError)).message).toMatch(
      /public clients only/,
    )
  })

  it('has no secret to rotate', async () => {
    expect((await rejectionOf(rotateClientSecret(ctx.db, clientId, ctx.clock.now()), AppError)).message).toMatch(/public client: it has no secret to rotate/)
  })
})

describe('the code flow of a public client', () => {
  it('exchanges a code with client_id alone and the PKCE verifier', async () => {
    const code = await publicCode()
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: VERIFIER})
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({token_type: 'bearer', scope: 'profile'})
  })

  it('gets no code without PKCE: the error goes back to the client', async () => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(clientId)))
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('location')!)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('error_description')).toMatch(/code_challenge \(PKCE, S256\) is required/)
  })

  it('refuses a wrong verifier and a secret it does not have', async () => {
    const code = await publicCode()
    const wrong = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: `${VERIFIER}x`})
    expect(wrong.status).toBe(400)
    expect(((await wrong.json()) as {error: string}).error).toBe('invalid_grant')
    const withSecret = await exchange(ctx, {
      grant_type: 'authorization_code',
      code: await publicCode(),
      redirect_uri: REDIRECT,
      client_id: clientId,
      client_secret: 'guess',
      code_verifier: VERIFIER,
    })
    expect(withSecret.status).toBe(401)
  })

  it('still asks a confidential client for its secret, whether or not the client exists', async () => {
    const client = await otherClient()
    for (const id of [client.client_id, 'no-such-client']) {
      const res = await exchange(ctx, {grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, client_id: id})
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({error: 'invalid_client', error_description: 'client authentication failed'})
    }
  })

  it('matches a registered loopback redirect on any port, for a native app', async () => {
    const res = await ctx.app.request(authorizeUrl({...authorizeParams(clientId, pkce), redirect_uri: 'http://127.0.0.1:53123/native'}))
    expect(res.status).toBe(200)
    const code = await publicCode('http://127.0.0.1:53123/native')
    const token = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:53123/native', client_id: clientId, code_verifier: VERIFIER})
    expect(token.status).toBe(200)
    // Only the port may differ; and only for a public client.
    expect((await ctx.app.request(authorizeUrl({...authorizeParams(clientId, pkce), redirect_uri: 'http://127.0.0.1:53123/other'}))).status).toBe(400)
    const client = await otherClient({redirect_uris: ['http://127.0.0.1/native']})
    expect((await ctx.app.request(authorizeUrl({...authorizeParams(client.client_id, pkce), redirect_uri: 'http://127.0.0.1:53123/native'}))).status).toBe(400)
  })

  it('never takes port 0: refused at registration and update, and never matched at authorize', async () => {
    const base = {name: 'App', url: APP_ORIGIN, logo_url: `${APP_ORIGIN}/l.png`, token_endpoint_auth_method: 'none' as const}
    for (const uri of ['http://127.0.0.1:0/native', 'http://[::1]:0/native', 'https://spa.example:0/callback', 'http://127.0.0.1:00/native']) {
      const refused = await rejectionOf(registerClient(ctx.store, {...base, redirect_uris: [SPA_REDIRECT, uri]}, ctx.clock.now()), AppError)
      expect(refused.message, uri).toBe('redirect_uris[1]: must not name port 0 (no app listens there; register a loopback URI without a port to match any)')
      const update = await rejectionOf(updateClient(ctx.store, clientId, {redirect_uris: [uri]}, ctx.clock.now()), AppError)
      expect(update.message, uri).toMatch(/^redirect_uris\[0\]: must not name port 0/)
      const logout = await rejectionOf(updateClient(ctx.store, clientId, {post_logout_redirect_uris: [uri]}, ctx.clock.now()), AppError)
      expect(logout.message, uri).toMatch(/^post_logout_redirect_uris\[0\]: must not name port 0/)
    }
    expect((await ctx.db.selectFrom('clients').select('id').execute()).length).toBe(1)
    // The registered loopback URI matches any port but 0, which no app can listen on.
    const res = await ctx.app.request(authorizeUrl({...authorizeParams(clientId, pkce), redirect_uri: 'http://127.0.0.1:0/native'}))
    expect(res.status).toBe(400)
    expect(res.headers.get('location')).toBeNull()
    // Nor is one stored by an earlier release matched, even byte for byte.
    await ctx.db
      .updateTable('clients')
      .set({redirect_uris: JSON.stringify(['http://127.0.0.1:0/native'])})
      .where('id', '=', clientId)
      .execute()
    const stored = await ctx.app.request(authorizeUrl({...authorizeParams(clientId, pkce), redirect_uri: 'http://127.0.0.1:0/native'}))
    expect(stored.status).toBe(400)
    expect(stored.headers.get('location')).toBeNull()
  })

  it("sends a native app's code to its private-use scheme", async () => {
    const location = await decide(ctx, {...authorizeParams(clientId, pkce), redirect_uri: 'com.example.app:/callback'})
    expect(location.protocol).toBe('com.example.app:')
    expect(location.searchParams.get('code')).toBeTruthy()
  })

  it('may revoke its tokens, but not introspect them', async () => {
    const code = await publicCode()
    const token = (
      (await (await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: VERIFIER})).json()) as {access_token: string}
    ).access_token
    const introspected = await ctx.app.request('/oauth/introspect', form({token, client_id: clientId}))
    expect(introspected.status).toBe(401)
    const revoked = await ctx.app.request('/oauth/revoke', form({token, client_id: clientId}))
    expect(revoked.status).toBe(200)
    expect((await ctx.app.request('/oauth/token/info', {headers: {authorization: `Bearer ${token}`}})).status).toBe(401)
  })
})

describe('CORS for browser apps', () => {
  const preflight = (path: string, origin: string) =>
    ctx.app.request(path, {method: 'OPTIONS', headers: {origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type'}})

  it('answers preflights from a registered origin on the token, revocation and UserInfo endpoints', async () => {
    for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/userinfo']) {
      const res = await preflight(path, APP_ORIGIN)
      expect(res.status, path).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/)
    }
  })

  it('answers no other origin, and never *', async () => {
    for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/userinfo']) {
      const res = await preflight(path, 'https://evil.example')
      expect(res.headers.get('access-control-allow-origin'), path).toBeNull()
    }
    const token = await ctx.app.request(
      '/oauth/token',
      form({grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, client_id: clientId}, {origin: 'https://evil.example'}),
    )
    expect(token.headers.get('access-control-allow-origin')).toBeNull()
  })

  it("lets the client's own origin read the token answer, errors included, and not another client's origin", async () => {
    const code = await publicCode(SPA_REDIRECT)
    const res = await ctx.app.request(
      '/oauth/token',
      form({grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: clientId, code_verifier: VERIFIER}, {origin: APP_ORIGIN}),
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
    const replay = await ctx.app.request(
      '/oauth/token',
      form({grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: clientId, code_verifier: VERIFIER}, {origin: APP_ORIGIN}),
    )
    expect(replay.status).toBe(400)
    expect(replay.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
    // Another registered client's origin may not read this client's answers.
    await registerTestClient(ctx.store, {name: 'Other', redirect_uris: ['https://other.example/cb']}, ctx.clock.now())
    const foreign = await ctx.app.request(
      '/oauth/token',
      form({grant_type: 'authorization_code', code, redirect_uri: SPA_REDIRECT, client_id: clientId}, {origin: 'https://other.example'}),
    )
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull()
  })

  it("gives a confidential client's origins nothing at the token and revocation endpoints, and keeps UserInfo open to them", async () => {
    // A confidential client authenticates with a secret, which never belongs in a browser: its
    // own origin, and an origin it shares with a public client, are refused when it calls.
    const confidential = await otherClient({redirect_uris: ['https://server.example/cb', `${APP_ORIGIN}/server-cb`]})
    const basic = {authorization: `Basic ${Buffer.from(`${confidential.client_id}:${confidential.client_secret}`).toString('base64')}`}
    for (const path of ['/oauth/token', '/oauth/revoke']) {
      const res = await preflight(path, 'https://server.example')
      expect(res.headers.get('access-control-allow-origin'), path).toBeNull()
      expect(res.headers.get('access-control-allow-methods'), path).toBeNull()
    }
    for (const origin of ['https://server.example', APP_ORIGIN]) {
      const token = await ctx.app.request('/oauth/token', form({grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT}, {...basic, origin}))
      expect(token.status, origin).toBe(400)
      expect(token.headers.get('access-control-allow-origin'), origin).toBeNull()
      const revoke = await ctx.app.request('/oauth/revoke', form({token: 'x'}, {...basic, origin}))
      expect(revoke.status, origin).toBe(200)
      expect(revoke.headers.get('access-control-allow-origin'), origin).toBeNull()
    }
    // UserInfo takes a bearer token, no client secret: a confidential client's origin may still read it.
    const userinfo = await preflight('/oauth/userinfo', 'https://server.example')
    expect(userinfo.status).toBe(204)
    expect(userinfo.headers.get('access-control-allow-origin')).toBe('https://server.example')
    // The public client's own origin is still answered at the token endpoint.
    expect((await preflight('/oauth/token', APP_ORIGIN)).headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
  })

  it('keeps discovery and the key set open to any origin, and sets no cookie on the CORS paths', async () => {
    const discovery = await ctx.app.request('/.well-known/openid-configuration', {headers: {origin: 'https://anyone.example'}})
    expect(discovery.headers.get('access-control-allow-origin')).toBe('*')
    const res = await preflight('/oauth/token', APP_ORIGIN)
    expect(res.headers.getSetCookie()).toEqual([])
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
  })
})
