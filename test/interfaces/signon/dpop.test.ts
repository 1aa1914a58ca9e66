import {createHash, randomUUID} from 'node:crypto'
import {calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT} from 'jose'
import {afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import {issueToken} from '../../../src/interfaces/signon/issue-token.js'
import {type RegisteredClient, updateClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {rejectionOf} from '../../helpers/rejection.js'
import {authorizeParams, authorizeUrl, decide, exchange, getCode, ORIGIN, REDIRECT, setupClientAndMember} from './flow.js'
import {registerTestClient} from '../../helpers/clients.js'

/*
 * DPoP (RFC 9449) through the HTTP interface: a token asked for with a proof is bound to the
 * proof's key, and is good at a resource only with a fresh proof signed by that key, carrying a
 * nonce this service handed out, for that request's method and URL and that token. Proofs are
 * signed here with jose, as a client library would; times move on the manual clock.
 */

interface Holder {
  privateKey: CryptoKey
  jwk: JWK
  jkt: string
}

async function holder(alg: 'ES256' | 'PS256' | 'RS256' = 'ES256'): Promise<Holder> {
  const {privateKey, publicKey} = await generateKeyPair(alg, {extractable: true})
  const jwk = await exportJWK(publicKey)
  return {privateKey, jwk, jkt: await calculateJwkThumbprint(jwk)}
}

let alice: Holder
let mallory: Holder
beforeAll(async () => {
  alice = await holder()
  mallory = await holder()
})

let ctx: TestContext
let client: RegisteredClient
let memberId: number
beforeEach(async () => {
  ctx = await freshApp()
  const setup = await setupClientAndMember(ctx, {token_ttl: null})
  client = setup.client
  memberId = setup.member.user_id
})
afterEach(async () => ctx.store.close())

interface ProofClaims {
  htm?: string
  htu?: string
  nonce?: string | undefined
  ath?: string
  iat?: number
  jti?: string
}

async function proof(who: Holder, claims: ProofClaims, header: Record<string, unknown> = {}): Promise<string> {
  const iat = claims.iat ?? Math.floor(ctx.clock.now().getTime() / 1000)
  const body: Record<string, unknown> = {htm: claims.htm ?? 'POST', htu: claims.htu ?? `${ORIGIN}/oauth/token`, jti: claims.jti ?? randomUUID(), iat}
  if (claims.nonce !== undefined) body.nonce = claims.nonce
  if (claims.ath !== undefined) body.ath = claims.ath
  return new SignJWT(body).setProtectedHeader({alg: 'ES256', typ: 'dpop+jwt', jwk: who.jwk, ...header}).sign(who.privateKey)
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url')
const secret = () => ({client_id: client.client_id, client_secret: client.client_secret})

/** The nonce the service hands out: asked for by a proof without one, as a client learns it. */
async function learnNonce(): Promise<string> {
  const res = await exchange(ctx, {grant_type: 'client_credentials', ...secret()}, {dpop: await proof(alice, {})})
  expect(res.status).toBe(400)
  expect(((await res.json()) as {error: string}).error).toBe('use_dpop_nonce')
  const nonce = res.headers.get('dpop-nonce')
  expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/)
  return nonce!
}

async function boundToken(who: Holder = alice, scope = 'profile'): Promise<{access_token: string; token_type: string; refresh_token?: string}> {
  const nonce = await learnNonce()
  const code = await getCode(ctx, client.client_id, {scope})
  const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()}, {dpop: await proof(who, {nonce})})
  expect(res.status, await res.clone().text()).toBe(200)
  expect(res.headers.get('dpop-nonce')).toBe(nonce)
  return (await res.json()) as {access_token: string; token_type: string}
}

/** GET a resource with a DPoP-bound token and a proof made for it. */
async function presentBound(path: string, token: string, who: Holder, claims: ProofClaims = {}): Promise<Response> {
  const nonce = 'nonce' in claims ? claims.nonce : await learnNonce()
  const dpop = await proof(who, {htm: 'GET', htu: `${ORIGIN}${path}`, ath: ath(token), ...claims, nonce})
  return ctx.app.request(path, {headers: {authorization: `DPoP ${token}`, dpop}})
}

const errorOf = async (res: Response) => (await res.json()) as {error: string; error_description: string}

describe('asking for a DPoP-bound token', () => {
  it('hands out a nonce first, then binds the token to the proof key (token_type DPoP, cnf.jkt in introspection)', async () => {
    const tokens = await boundToken()
    expect(tokens.token_type).toBe('DPoP')
    const res = await ctx.app.request('/oauth/introspect', form({token: tokens.access_token, ...secret()}))
    expect(await res.json()).toMatchObject({active: true, token_type: 'DPoP', cnf: {jkt: alice.jkt}})
  })

  it('binds a JWT access token (RFC 9068) too: cnf.jkt in the token itself, and it still needs the proof at medpanel', async () => {
    await ctx.db.updateTable('clients').set({access_token_format: 'jwt'}).where('id', '=', client.client_id).execute()
    const tokens = await boundToken()
    expect(tokens.token_type).toBe('DPoP')
    expect(decodeJwt(tokens.access_token)).toMatchObject({cnf: {jkt: alice.jkt}, client_id: client.client_id})
    expect((await presentBound('/oauth/token/info', tokens.access_token, alice)).status).toBe(200)
    expect((await presentBound('/oauth/token/info', tokens.access_token, mallory)).status).toBe(401)
  })

  it('answers a bearer token, as before, to a request without a proof', async () => {
    const code = await getCode(ctx, client.client_id)
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()})
    const tokens = (await res.json()) as {token_type: string; access_token: string}
    expect(tokens.token_type).toBe('bearer')
    const introspected = await (await ctx.app.request('/oauth/introspect', form({token: tokens.access_token, ...secret()}))).json()
    expect(introspected).not.toHaveProperty('cnf')
  })

  it.each([
    ['a proof for another endpoint', {htu: `${ORIGIN}/oauth/par`}, /htu must be/],
    ['a proof for another method', {htm: 'GET'}, /htm must be POST/],
    ['a proof made long ago', {iat: 1_000}, /iat must be within the last 60 seconds/],
  ])('refuses %s (invalid_dpop_proof) and mints nothing', async (_name, claims, why) => {
    const nonce = await learnNonce()
    const code = await getCode(ctx, client.client_id)
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()}, {dpop: await proof(alice, {nonce, ...claims})})
    expect(res.status).toBe(400)
    const body = await errorOf(res)
    expect(body.error).toBe('invalid_dpop_proof')
    expect(body.error_description).toMatch(why)
    expect(await ctx.db.selectFrom('access_tokens').select('id').execute()).toEqual([])
  })

  it('refuses a proof whose header is not a DPoP proof: a private key, an HMAC, another typ, no jwk', async () => {
    const nonce = await learnNonce()
    const privateJwk = {...(await exportJWK(alice.privateKey))}
    const cases: [Record<string, unknown>, RegExp][] = [
      [{jwk: privateJwk}, /must be a public key/],
      [{typ: 'JWT'}, /typ dpop\+jwt/],
      [{jwk: undefined}, /must carry the public key/],
    ]
    for (const [header, why] of cases) {
      const res = await exchange(ctx, {grant_type: 'client_credentials', ...secret()}, {dpop: await proof(alice, {nonce}, header)})
      expect([res.status, (await errorOf(res)).error_description]).toEqual([400, expect.stringMatching(why)])
    }
    const hmac = await new SignJWT({htm: 'POST', htu: `${ORIGIN}/oauth/token`, jti: 'x', iat: Math.floor(ctx.clock.now().getTime() / 1000), nonce})
      // jose will not put a symmetric key in a header; a forger writes the header by hand.
      .setProtectedHeader({alg: 'HS256', typ: 'dpop+jwt', jwk: {kty: 'oct', k: 'c2VjcmV0'} as unknown as JWK})
      .sign(new TextEncoder().encode('secret'))
    const res = await exchange(ctx, {grant_type: 'client_credentials', ...secret()}, {dpop: hmac})
    expect((await errorOf(res)).error_description).toMatch(/alg must be one of ES256, PS256, RS256/)
  })

  it('refuses a proof signed by another key than its header names', async () => {
    const nonce = await learnNonce()
    const forged = await new SignJWT({htm: 'POST', htu: `${ORIGIN}/oauth/token`, jti: 'forged', iat: Math.floor(ctx.clock.now().getTime() / 1000), nonce})
      .setProtectedHeader({alg: 'ES256', typ: 'dpop+jwt', jwk: alice.jwk})
      .sign(mallory.privateKey)
    const res = await exchange(ctx, {grant_type: 'client_credentials', ...secret()}, {dpop: forged})
    expect([res.status, (await errorOf(res)).error_description]).toEqual([400, expect.stringMatching(/signature does not verify/)])
  })

  it('accepts the nonce of the period before, and refuses an older one with a new nonce', async () => {
    const nonce = await learnNonce()
    ctx.clock.advance(300)
    const ok = await exchange(ctx, {grant_type: 'client_credentials', ...secret()}, {dpop: await proof(alice, {nonce})})
    expect(ok.status).toBe(400) // the client has no pulses grant: past the proof, refused for that
    expect((await errorOf(ok)).error).toBe('unauthorized_client')
    ctx.clock.advance(300)
    const stale = await exchange(ctx, {grant_type: 'client_credentials', ...secret()}, {dpop: await proof(alice, {nonce})})
    expect((await errorOf(stale)).error).toBe('use_dpop_nonce')
    expect(stale.headers.get('dpop-nonce')).not.toBe(nonce)
  })

  it('accepts a proof once: the same jti again is a replay', async () => {
    const nonce = await learnNonce()
    const once = await proof(alice, {nonce})
    const code = await getCode(ctx, client.client_id)
    expect((await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()}, {dpop: once})).status).toBe(200)
    const again = await exchange(ctx, {grant_type: 'authorization_code', code: await getCode(ctx, client.client_id), redirect_uri: REDIRECT, ...secret()}, {dpop: once})
    expect([again.status, (await errorOf(again)).error_description]).toEqual([400, expect.stringMatching(/presented before/)])
  })
})

describe('a code bound to a key in advance (RFC 9449 §10)', () => {
  const exchangeWith = async (code: string, who?: Holder) => {
    const headers: Record<string, string> = who ? {dpop: await proof(who, {nonce: await learnNonce()})} : {}
    return exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()}, headers)
  }

  it('by dpop_jkt: only a token request with a proof of that key exchanges it, and a refused one leaves it unspent', async () => {
    const code = await getCode(ctx, client.client_id, {dpop_jkt: alice.jkt})
    for (const who of [undefined, mallory]) {
      const refused = await exchangeWith(code, who)
      expect([refused.status, (await errorOf(refused)).error_description]).toEqual([400, expect.stringMatching(/bound to a DPoP key \(dpop_jkt\)/)])
    }
    const owner = await exchangeWith(code, alice)
    expect([owner.status, ((await owner.json()) as {token_type: string}).token_type]).toEqual([200, 'DPoP'])
  })

  it('refuses a dpop_jkt that is no thumbprint, on the redirect', async () => {
    const res = await ctx.app.request(authorizeUrl(authorizeParams(client.client_id, {dpop_jkt: 'not-a-thumbprint'})))
    const location = new URL(res.headers.get('location')!)
    expect([location.searchParams.get('error'), location.searchParams.get('error_description')]).toEqual(['invalid_request', expect.stringMatching(/dpop_jkt must be/)])
  })

  it('by the DPoP proof sent with a pushed request, which must agree with a dpop_jkt beside it', async () => {
    const push = async (extra: Record<string, string>, dpop: string) => ctx.app.request('/oauth/par', form({...authorizeParams(client.client_id), ...secret(), ...extra}, {dpop}))
    const nonce = await learnNonce()
    const par = `${ORIGIN}/oauth/par`
    const mismatch = await push({dpop_jkt: mallory.jkt}, await proof(alice, {htu: par, nonce}))
    expect([mismatch.status, (await errorOf(mismatch)).error]).toEqual([400, 'invalid_dpop_proof'])
    const pushed = await push({}, await proof(alice, {htu: par, nonce}))
    expect(pushed.status, await pushed.clone().text()).toBe(201)
    const {request_uri} = (await pushed.json()) as {request_uri: string}
    const location = await decide(ctx, {client_id: client.client_id, request_uri})
    const code = location.searchParams.get('code')!
    expect((await exchangeWith(code, mallory)).status).toBe(400)
    expect((await exchangeWith(code, alice)).status).toBe(200)
  })
})

describe('presenting a DPoP-bound token', () => {
  const INFO = '/oauth/token/info'

  it('is accepted at token info, member info and UserInfo with a fresh proof of its key', async () => {
    const {access_token} = await boundToken(alice, 'openid profile')
    for (const path of [INFO, '/oauth/user/info', '/oauth/userinfo']) {
      const res = await presentBound(path, access_token, alice)
      expect([path, res.status]).toEqual([path, 200])
    }
  })

  it('is refused as a bearer token, with a DPoP challenge', async () => {
    const {access_token} = await boundToken()
    const res = await ctx.app.request(INFO, {headers: {authorization: `Bearer ${access_token}`}})
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^DPoP algs="ES256 PS256 RS256", error="invalid_token", error_description="This access token is bound to a DPoP key/)
  })

  it('is refused without a proof, with a proof of another key, for another URL or token, or replayed', async () => {
    const {access_token} = await boundToken()
    const none = await ctx.app.request(INFO, {headers: {authorization: `DPoP ${access_token}`}})
    expect([none.status, (await errorOf(none)).error]).toEqual([401, 'invalid_dpop_proof'])
    const stolen = await presentBound(INFO, access_token, mallory)
    expect([stolen.status, (await errorOf(stolen)).error_description]).toEqual([401, expect.stringMatching(/another key/)])
    const elsewhere = await presentBound(INFO, access_token, alice, {htu: `${ORIGIN}/oauth/user/info`})
    expect([elsewhere.status, (await errorOf(elsewhere)).error_description]).toEqual([401, expect.stringMatching(/htu must be/)])
    const otherToken = await presentBound(INFO, access_token, alice, {ath: ath('another token')})
    expect([otherToken.status, (await errorOf(otherToken)).error_description]).toEqual([401, expect.stringMatching(/ath is not the hash/)])
    const nonce = await learnNonce()
    const dpop = await proof(alice, {htm: 'GET', htu: `${ORIGIN}${INFO}`, ath: ath(access_token), nonce})
    const first = await ctx.app.request(INFO, {headers: {authorization: `DPoP ${access_token}`, dpop}})
    const replay = await ctx.app.request(INFO, {headers: {authorization: `DPoP ${access_token}`, dpop}})
    expect([first.status, replay.status]).toEqual([200, 401])
    expect(replay.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof"/)
  })

  it('accepts one of two copies of a proof presented at once (spent in one batch of the writer)', async () => {
    const {access_token} = await boundToken()
    const nonce = await learnNonce()
    const dpop = await proof(alice, {htm: 'GET', htu: `${ORIGIN}${INFO}`, ath: ath(access_token), nonce})
    const present = () => ctx.app.request(INFO, {headers: {authorization: `DPoP ${access_token}`, dpop}})
    const answers = await Promise.all([present(), present(), present()])
    expect(answers.map((res) => res.status).sort()).toEqual([200, 401, 401])
    const refused = answers.find((res) => res.status === 401)!
    expect((await errorOf(refused)).error_description).toMatch(/presented before/)
  })

  it('asks for a nonce with use_dpop_nonce and the nonce in DPoP-Nonce', async () => {
    const {access_token} = await boundToken()
    const res = await presentBound(INFO, access_token, alice, {nonce: undefined})
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^DPoP algs="[^"]+", error="use_dpop_nonce"/)
    expect(res.headers.get('dpop-nonce')).toBe(await learnNonce())
  })

  it('refuses a bearer token sent with the DPoP scheme', async () => {
    const code = await getCode(ctx, client.client_id)
    const {access_token} = (await (await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()})).json()) as {access_token: string}
    const res = await presentBound(INFO, access_token, alice)
    expect([res.status, (await errorOf(res)).error_description]).toEqual([401, expect.stringMatching(/not bound to a DPoP key/)])
  })

  it('works for a client token at interface D (pulse export)', async () => {
    const pulses = await registerTestClient(ctx.store, {name: 'Pulse Co', grants: ['pulses']}, ctx.clock.now())
    const nonce = await learnNonce()
    const res = await exchange(ctx, {grant_type: 'client_credentials', client_id: pulses.client_id, client_secret: pulses.client_secret}, {dpop: await proof(alice, {nonce})})
    const {access_token, token_type} = (await res.json()) as {access_token: string; token_type: string}
    expect(token_type).toBe('DPoP')
    expect((await ctx.app.request('/clients/info', {headers: {authorization: `Bearer ${access_token}`}})).status).toBe(401)
    expect((await presentBound('/clients/info', access_token, alice)).status).toBe(200)
  })
})

describe('refresh tokens and DPoP', () => {
  const VERIFIER = 'dpop-public-client-verifier-0123456789abcdefghijklmnop'
  const pkce = {code_challenge: createHash('sha256').update(VERIFIER).digest('base64url'), code_challenge_method: 'S256'}

  async function publicTokens(who: Holder): Promise<{publicId: string; refresh_token: string}> {
    const spa = await registerTestClient(ctx.store, {name: 'Acme App', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none'}, ctx.clock.now())
    const publicId = spa.client_id
    const location = await decide(ctx, authorizeParams(publicId, {...pkce, scope: 'openid offline_access'}))
    const nonce = await learnNonce()
    const res = await exchange(
      ctx,
      {grant_type: 'authorization_code', code: location.searchParams.get('code')!, redirect_uri: REDIRECT, client_id: publicId, code_verifier: VERIFIER},
      {dpop: await proof(who, {nonce})},
    )
    expect(res.status, await res.clone().text()).toBe(200)
    return {publicId, refresh_token: ((await res.json()) as {refresh_token: string}).refresh_token}
  }

  it("binds a public client's refresh tokens to its key: refreshed only with a proof of that key", async () => {
    const {publicId, refresh_token} = await publicTokens(alice)
    const refresh = async (dpop?: string) => exchange(ctx, {grant_type: 'refresh_token', refresh_token, client_id: publicId}, dpop ? {dpop} : {})
    const bare = await refresh()
    expect([bare.status, (await errorOf(bare)).error_description]).toEqual([400, expect.stringMatching(/bound to a DPoP key/)])
    const nonce = await learnNonce()
    const thief = await refresh(await proof(mallory, {nonce}))
    expect([thief.status, (await errorOf(thief)).error]).toEqual([400, 'invalid_grant'])
    const owner = await refresh(await proof(alice, {nonce}))
    expect(owner.status).toBe(200)
    const next = (await owner.json()) as {token_type: string; refresh_token: string}
    expect(next.token_type).toBe('DPoP')
    const row = await ctx.db.selectFrom('refresh_tokens').select('dpop_jkt').where('used_at', 'is', null).executeTakeFirstOrThrow()
    expect(row.dpop_jkt).toBe(alice.jkt)
  })

  it("revokes a public client's bound refresh token only with a proof of its key; without one nothing ends", async () => {
    const {publicId, refresh_token} = await publicTokens(alice)
    const revokeUrl = `${ORIGIN}/oauth/revoke`
    const revoke = async (token: string, dpop?: string) => ctx.app.request('/oauth/revoke', form({token, client_id: publicId}, dpop ? {dpop} : {}))
    // Anyone may name a public client: the token alone, or with a proof of another key, ends nothing.
    const bare = await revoke(refresh_token)
    expect([bare.status, await errorOf(bare)]).toEqual([400, {error: 'invalid_request', error_description: expect.stringMatching(/bound to a DPoP key/)}])
    const nonce = await learnNonce()
    const thief = await revoke(refresh_token, await proof(mallory, {htu: revokeUrl, nonce}))
    expect([thief.status, (await errorOf(thief)).error]).toEqual([400, 'invalid_dpop_proof'])
    // The proof is checked as at the token endpoint: the nonce first, and for this URL.
    const noNonce = await revoke(refresh_token, await proof(alice, {htu: revokeUrl}))
    expect([noNonce.status, (await errorOf(noNonce)).error, noNonce.headers.get('dpop-nonce')]).toEqual([400, 'use_dpop_nonce', nonce])
    const elsewhere = await revoke(refresh_token, await proof(alice, {nonce}))
    expect([elsewhere.status, (await errorOf(elsewhere)).error]).toEqual([400, 'invalid_dpop_proof'])
    // Nothing ended: the owner still refreshes.
    const refreshed = await exchange(ctx, {grant_type: 'refresh_token', refresh_token, client_id: publicId}, {dpop: await proof(alice, {nonce})})
    expect(refreshed.status).toBe(200)
    const next = (await refreshed.json()) as {access_token: string; refresh_token: string}
    // With a proof of its key it is revoked, and its family with it.
    const owner = await revoke(next.refresh_token, await proof(alice, {htu: revokeUrl, nonce}))
    expect([owner.status, await owner.json()]).toEqual([200, {}])
    const after = await exchange(ctx, {grant_type: 'refresh_token', refresh_token: next.refresh_token, client_id: publicId}, {dpop: await proof(alice, {nonce})})
    expect([after.status, (await errorOf(after)).error]).toEqual([400, 'invalid_grant'])
    expect((await presentBound('/oauth/userinfo', next.access_token, alice)).status).toBe(401)
  })

  it("revokes a confidential client's refresh token with its secret alone, as before", async () => {
    const nonce = await learnNonce()
    const code = await getCode(ctx, client.client_id, {scope: 'openid offline_access'})
    const first = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()}, {dpop: await proof(alice, {nonce})})
    const {refresh_token} = (await first.json()) as {refresh_token: string}
    const revoked = await ctx.app.request('/oauth/revoke', form({token: refresh_token, ...secret()}))
    expect([revoked.status, await revoked.json()]).toEqual([200, {}])
    const res = await exchange(ctx, {grant_type: 'refresh_token', refresh_token, ...secret()})
    expect([res.status, (await errorOf(res)).error]).toEqual([400, 'invalid_grant'])
  })

  it("leaves a confidential client's refresh token unbound: it proves itself with its secret", async () => {
    const nonce = await learnNonce()
    const code = await getCode(ctx, client.client_id, {scope: 'openid offline_access'})
    const first = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()}, {dpop: await proof(alice, {nonce})})
    const {refresh_token} = (await first.json()) as {refresh_token: string}
    const res = await exchange(ctx, {grant_type: 'refresh_token', refresh_token, ...secret()})
    expect([res.status, ((await res.json()) as {token_type: string}).token_type]).toEqual([200, 'bearer'])
  })
})

describe('a client registered to require DPoP', () => {
  it('gets no bearer token: not at the token endpoint, not from issue-token', async () => {
    await updateClient(ctx.store, client.client_id, {dpop_bound_access_tokens: true}, ctx.clock.now())
    const code = await getCode(ctx, client.client_id)
    const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...secret()})
    expect([res.status, (await errorOf(res)).error_description]).toEqual([400, expect.stringMatching(/only DPoP-bound tokens/)])
    expect((await rejectionOf(issueToken(ctx.db, memberId, client.client_id, ctx.clock.now()), AppError)).message).toMatch(/only DPoP-bound tokens/)
    expect((await boundToken()).token_type).toBe('DPoP')
  })
})

describe('discovery', () => {
  it('names the algorithms a proof may use', async () => {
    const metadata = (await (await ctx.app.request('/.well-known/openid-configuration')).json()) as Record<string, unknown>
    expect(metadata.dpop_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'RS256'])
  })
})
