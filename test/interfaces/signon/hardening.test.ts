import {join} from 'node:path'
import {narrow, narrowParts} from '../../../src/store/database.js'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../../src/app.js'
import {issueToken} from '../../../src/interfaces/signon/issue-token.js'
import {resolveToken} from '../../../src/grants/service.js'
import {revokeTokens} from '../../../src/grants/repository.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {addMember, updateClient, updateMember, type RegisteredClient} from '../../../src/registry/service.js'
import {openStore} from '../../../src/schema.js'
import {writeTransaction} from '../../../src/store/transactions.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {tempDir} from '../../helpers/cli.js'
import {PASSWORD, REDIRECT, authorizeUrl, authorizeParams, bearer, exchange, getCode, setupClientAndMember, signIn, tokenFor} from './flow.js'
import {openMemoryStore} from '../../helpers/store.js'
import {basicAuth} from '../../helpers/http-basic.js'
import {registerTestClient} from '../../helpers/clients.js'

describe('sign-on hardening', () => {
  let ctx: TestContext
  let client: RegisteredClient
  beforeEach(async () => {
    ctx = await freshApp({demo: true})
    client = (await setupClientAndMember(ctx)).client
  })
  afterEach(async () => ctx.store.close())

  const grant = (code: string) => ({grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret})

  async function expectInvalidGrant(res: Response) {
    expect(res.status).toBe(400)
    expect(((await res.json()) as {error: string}).error).toBe('invalid_grant')
  }

  it('a password change expires codes not yet exchanged, so they buy no token', async () => {
    const code = await getCode(ctx, client.client_id)
    await updateMember(ctx.db, 1, {password: 'a brand new password'}, ctx.clock.now())
    await expectInvalidGrant(await exchange(ctx, grant(code)))
  })

  it('a deactivation expires pending codes for good: reactivating does not revive them', async () => {
    const code = await getCode(ctx, client.client_id)
    await updateMember(ctx.db, 1, {active: false}, ctx.clock.now())
    await updateMember(ctx.db, 1, {active: true}, ctx.clock.now())
    await expectInvalidGrant(await exchange(ctx, grant(code)))
  })

  it("a deactivation ends the member's sign-in sessions, and reactivating does not bring them back", async () => {
    const {jar} = await signIn(ctx, authorizeParams(client.client_id))
    const consent = async () => (await ctx.app.request(authorizeUrl(authorizeParams(client.client_id)), {headers: jar.header()})).text()
    expect(await consent()).toContain('name="decision"')
    ctx.clock.advance(1)
    await updateMember(ctx.db, 1, {active: false}, ctx.clock.now())
    await updateMember(ctx.db, 1, {active: true}, ctx.clock.now())
    // Back to the sign-in form, not the consent buttons.
    const page = await consent()
    expect(page).not.toContain('name="decision"')
    expect(page).toContain('name="password"')
  })

  it("a member token dies with its client's signon grant, as the authorize endpoint would refuse that client", async () => {
    const token = await tokenFor(ctx, client)
    expect((await ctx.app.request('/user/oauth/token/info', bearer(token))).status).toBe(200)
    await updateClient(ctx.store, client.client_id, {grants: ['balance']}, ctx.clock.now())
    const res = await ctx.app.request('/user/oauth/token/info', bearer(token))
    expect(res.status).toBe(401)
    expect(((await res.json()) as {error_description: string}).error_description).toMatch(/signon grant/)
  })

  it('a failed HTTP Basic client authentication carries a Basic challenge', async () => {
    const code = await getCode(ctx, client.client_id)
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT}, {authorization: basicAuth(client.client_id, 'wrong-secret')})
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /)
    expect(((await res.json()) as {error: string}).error).toBe('invalid_client')
  })

  it("the demo callback prints the curl line only for a code it issued, with that code's client, and no secret but the demo's", async () => {
    const hostile = await ctx.app.request(`/demo/callback?code=${encodeURIComponent('x; touch /tmp/pwned #')}`)
    expect(await hostile.text()).not.toContain('curl')
    expect(await (await ctx.app.request('/demo/callback?code=Abc_123-xyz')).text()).not.toContain('curl')
    // A code issued to another client (Acme): its own client id, and a placeholder for its secret.
    const code = await getCode(ctx, client.client_id)
    const page = await (await ctx.app.request(`/demo/callback?code=${code}`)).text()
    expect(page).toContain(`-d client_id=${client.client_id}`)
    expect(page).toContain('-d client_secret=YOUR_CLIENT_SECRET')
    expect(page).not.toContain('demo-client-secret')
    expect(page).toContain(`-d code=${code}`)
  })
})

describe('sign-on cookies behind a TLS-ending proxy', () => {
  it('are Secure when the public base URL is https, though the request came over http', async () => {
    const store = await openMemoryStore()
    try {
      const clock = new ManualClock()
      const client = await registerTestClient(store, {name: 'Acme', redirect_uris: [REDIRECT]}, clock.now())
      const params = authorizeParams(client.client_id)
      const behindProxy = createApp({store, clock, log: () => {}, baseUrl: 'https://panel.example'})
      const secure = await behindProxy.request(authorizeUrl(params))
      expect(secure.status).toBe(200)
      expect(secure.headers.getSetCookie().join('\n')).toMatch(/mp_csrf=.*; Secure/)
      const plain = await createApp({store, clock, log: () => {}}).request(authorizeUrl(params))
      expect(plain.headers.getSetCookie().join('\n')).not.toMatch(/Secure/)
    } finally {
      await store.close()
    }
  })
})

describe('remembered token lookups', () => {
  it('see a revocation committed by another connection (another process) to the same file', async () => {
    const file = join(tempDir(), 'cache.db')
    const server = await openStore({file})
    const operator = await openStore({file})
    try {
      const now = new Date()
      const client = await registerTestClient(narrowParts(server), {name: 'Acme', redirect_uris: [REDIRECT]}, now)
      await addMember(narrow(server.db), {email: 'ana@clinic.example', password: PASSWORD, first_name: 'Ana', last_name: 'Ruiz', country: 'US', specialty: 'Oncology'}, now)
      const {access_token} = await issueToken(narrow(server.db), 1, client.client_id, now)
      expect(await resolveToken(narrow(server.db), access_token, now)).toMatchObject({memberId: 1})
      expect(await resolveToken(narrow(server.db), access_token, now)).toMatchObject({memberId: 1})
      await updateMember(narrow(operator.db), 1, {password: 'changed by the operator'}, now)
      // The next request arrives in a later turn of the event loop, as requests do.
      await new Promise((resolve) => setImmediate(resolve))
      expect(await resolveToken(narrow(server.db), access_token, now)).toEqual({dead: 'The access token was revoked'})
    } finally {
      await operator.close()
      await server.close()
    }
  })

  it('never serve an uncommitted revocation as final, nor a rolled-back one as dead', async () => {
    const store = await openMemoryStore()
    try {
      const now = new Date()
      const client = await registerTestClient(store, {name: 'Acme', redirect_uris: [REDIRECT]}, now)
      await addMember(store.db, {email: 'ana@clinic.example', password: PASSWORD, first_name: 'Ana', last_name: 'Ruiz', country: 'US', specialty: 'Oncology'}, now)
      const {access_token} = await issueToken(store.db, 1, client.client_id, now)
      expect(await resolveToken(store.db, access_token, now)).toMatchObject({memberId: 1})
      let during: Promise<unknown> | undefined
      await expect(
        writeTransaction(store.db, async (trx) => {
          await revokeTokens(trx, {memberId: 1}, now.toISOString())
          // A request arriving while the revocation is open waits for the outcome.
          during = resolveToken(store.db, access_token, now)
          throw new Error('changed my mind')
        }),
      ).rejects.toThrow('changed my mind')
      expect(await during).toMatchObject({memberId: 1})
      expect(await resolveToken(store.db, access_token, now)).toMatchObject({memberId: 1})
      await revokeTokens(store.db, {memberId: 1}, now.toISOString())
      expect(await resolveToken(store.db, access_token, now)).toEqual({dead: 'The access token was revoked'})
    } finally {
      await store.close()
    }
  })
})

describe('member info refusals beyond a dead token', () => {
  it('a client_credentials token (no member) is 401 invalid_token with a Bearer challenge', async () => {
    const ctx = await freshApp()
    try {
      const client = await registerTestClient(ctx.store, {name: 'Pulses', redirect_uris: [REDIRECT], grants: ['signon', 'pulses']}, ctx.clock.now())
      const res = await exchange(ctx, {grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret})
      const {access_token} = (await res.json()) as {access_token: string}
      const info = await ctx.app.request('/user/oauth/user/info', {headers: {authorization: `Bearer ${access_token}`}})
      expect(info.status).toBe(401)
      expect(info.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/)
      expect(((await info.json()) as {error: string}).error).toBe('invalid_token')
    } finally {
      await ctx.store.close()
    }
  })
})

describe('headers on every HTML page', () => {
  it('sends a strict Content-Security-Policy, Referrer-Policy same-origin and nosniff, and no no-referrer', async () => {
    const ctx = await freshApp({demo: true})
    try {
      const {client} = await setupClientAndMember(ctx)
      const pages = [authorizeUrl(authorizeParams(client.client_id)), '/oauth/authorize?client_id=nobody', '/demo/callback?code=abc', '/docs']
      for (const path of pages) {
        const res = await ctx.app.request(path)
        expect(res.headers.get('content-type'), path).toMatch(/^text\/html/)
        const csp = res.headers.get('content-security-policy') ?? ''
        expect(csp, path).toContain("default-src 'none'")
        expect(csp, path).toContain("frame-ancestors 'none'")
        expect(csp, path).toContain("form-action 'self'")
        expect(res.headers.get('referrer-policy'), path).toBe('same-origin')
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff')
        expect(await res.text(), path).not.toContain('no-referrer"')
      }
    } finally {
      await ctx.store.close()
    }
  })
})
