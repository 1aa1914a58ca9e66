import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {exportJWK, generateKeyPair, type JWK, SignJWT} from 'jose'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {CLIENT_ASSERTION_TYPE} from '../../../src/interfaces/signon/client-assertion.js'
import type {ClientJwks} from '../../../src/registry/client-keys.js'
import {registerClient, rotateClientSecret, updateClient} from '../../../src/registry/service.js'
import {form, freshApp, type TestContext} from '../../helpers/app.js'
import {basicAuth} from '../../helpers/http-basic.js'
import {registerTestClient} from '../../helpers/clients.js'
import {freePort} from '../../helpers/cli.js'

/*
 * private_key_jwt (RFC 7523 §2.2) at the token, introspection and revocation endpoints: a client
 * that registered only public keys proves itself with a JWT it signed, once, for this server.
 */

const ISSUER = 'http://localhost'
const TOKEN = `${ISSUER}/oauth/token`

interface Signer {
  privateKey: CryptoKey
  jwk: JWK
}

async function signer(alg: 'ES256' | 'RS256' | 'PS256', kid: string): Promise<Signer> {
  const {privateKey, publicKey} = await generateKeyPair(alg, {extractable: true})
  return {privateKey, jwk: {...(await exportJWK(publicKey)), kid, alg, use: 'sig'}}
}

let ctx: TestContext
let es: Signer
let rs: Signer
let n = 0

beforeAll(async () => {
  es = await signer('ES256', 'es-1')
  rs = await signer('PS256', 'ps-1')
})
beforeEach(async () => {
  ctx = await freshApp()
})
afterEach(async () => ctx.store.close())

/** A JWK Set of these public keys, as registered. */
const set = (...keys: JWK[]) => ({keys}) as unknown as ClientJwks

async function register(keys: {jwks: ClientJwks} | {jwks_uri: string} = {jwks: set(es.jwk, rs.jwk)}) {
  return registerClient(
    ctx.store,
    {
      name: 'Health Partner',
      url: 'https://health.example',
      logo_url: 'https://health.example/logo.png',
      redirect_uris: ['https://health.example/callback'],
      grants: ['signon', 'pulses'],
      token_endpoint_auth_method: 'private_key_jwt',
      ...keys,
    },
    ctx.clock.now(),
  )
}

/** An assertion as a client library makes one, with `overrides` applied to its claims and header. */
async function assertion(clientId: string, key: Signer, overrides: {claims?: Record<string, unknown>; alg?: string; kid?: string} = {}): Promise<string> {
  const now = Math.floor(ctx.clock.now().getTime() / 1000)
  n += 1
  const claims = {iss: clientId, sub: clientId, aud: TOKEN, jti: `jti-${n}-${Math.random()}`, iat: now, exp: now + 60, ...overrides.claims}
  return new SignJWT(claims).setProtectedHeader({alg: overrides.alg ?? key.jwk.alg!, kid: overrides.kid ?? key.jwk.kid}).sign(key.privateKey)
}

function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_assertion_type: CLIENT_ASSERTION_TYPE, ...fields}, headers))
}

/**
 * A refused authentication: the answer is the same whatever went wrong; the reason is in the
 * log line of the request's id, which is returned.
 */
async function refusal(response: Response): Promise<string> {
  expect(response.status).toBe(401)
  expect(await response.json()).toEqual({error: 'invalid_client', error_description: 'client authentication failed'})
  const id = response.headers.get('x-request-id')
  const line = ctx.logs.find((logged) => logged.startsWith(`refused id=${id} `))
  expect(line, `no log line for ${id}`).toBeDefined()
  return line!
}

describe('private_key_jwt at the token endpoint', () => {
  it('registers the client without a secret and shows its key ids', async () => {
    const client = await register()
    expect('client_secret' in client).toBe(false)
    expect(client).toMatchObject({token_endpoint_auth_method: 'private_key_jwt', jwks_key_ids: ['es-1', 'ps-1'], jwks_uri: null})
    await expect(rotateClientSecret(ctx.db, client.client_id, ctx.clock.now())).rejects.toThrow(/no secret to rotate; give it new keys/)
  })

  it('issues a token for an assertion signed by either registered key (ES256, PS256), addressed to the issuer or the endpoint', async () => {
    const {client_id} = await register()
    for (const [key, aud] of [
      [es, TOKEN],
      [rs, ISSUER],
    ] as const) {
      const res = await tokenRequest({client_assertion: await assertion(client_id, key, {claims: {aud}})})
      expect(res.status, await res.clone().text()).toBe(200)
      expect(((await res.json()) as {access_token: string}).access_token).toBeTruthy()
    }
  })

  it('refuses the same assertion twice (its jti)', async () => {
    const {client_id} = await register()
    const once = await assertion(client_id, es)
    expect((await tokenRequest({client_assertion: once})).status).toBe(200)
    expect(await refusal(await tokenRequest({client_assertion: once}))).toMatch(/jti was presented before/)
  })

  it('refuses an assertion signed by a key the client did not register, whatever kid it names', async () => {
    const {client_id} = await register()
    const stranger = await signer('ES256', 'es-1')
    expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, stranger)}))).toMatch(/signature is not by any of the client's keys/)
  })

  it('refuses alg none and HMAC keyed with the public key, whatever the header says', async () => {
    const {client_id} = await register()
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    const claims = {iss: client_id, sub: client_id, aud: TOKEN, jti: 'none-1', exp: now + 60}
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
    const unsigned = `${b64({alg: 'none'})}.${b64(claims)}.`
    expect(await refusal(await tokenRequest({client_assertion: unsigned}))).toMatch(/alg must be one of ES256, PS256, RS256/)
    const hmac = await new SignJWT({...claims, jti: 'hs-1'}).setProtectedHeader({alg: 'HS256', kid: 'es-1'}).sign(new TextEncoder().encode(JSON.stringify(es.jwk)))
    expect(await refusal(await tokenRequest({client_assertion: hmac}))).toMatch(/alg must be one of/)
  })

  it('refuses wrong claims: another audience, iss unlike sub, expired, too long-lived, no jti', async () => {
    const {client_id} = await register()
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    const cases: [Record<string, unknown>, RegExp][] = [
      [{aud: 'https://other.example/token'}, /claim aud is not right/],
      [{sub: 'someone-else'}, /claim sub is not right: it must be the client id/],
      [{exp: now - 3600, iat: now - 3700}, /has expired/],
      [{exp: now + 3600}, /expires too far ahead: at most 300 seconds/],
      [{jti: undefined}, /jti/],
    ]
    for (const [claims, message] of cases) {
      expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, es, {claims})}))).toMatch(message)
    }
  })

  it('refuses an iat further ahead than the clock skew, and an exp more than 300 seconds ahead', async () => {
    const {client_id} = await register()
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    // A minute of clock difference is forgiven; more means the assertion was made to be used later.
    expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, es, {claims: {iat: now + 61, exp: now + 120}})}))).toMatch(
      /iat is more than 60 seconds in the future/,
    )
    expect((await tokenRequest({client_assertion: await assertion(client_id, es, {claims: {iat: now + 60, exp: now + 120}})})).status).toBe(200)
    expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, es, {claims: {exp: now + 301}})}))).toMatch(/expires too far ahead: at most 300 seconds/)
    expect((await tokenRequest({client_assertion: await assertion(client_id, es, {claims: {exp: now + 300}})})).status).toBe(200)
  })

  it('is the only way for such a client: no secret, no bare client_id; and no other client may use assertions', async () => {
    const {client_id} = await register()
    const basic = basicAuth(client_id, 'anything')
    expect((await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basic}))).status).toBe(401)
    expect((await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_id}))).status).toBe(401)
    const secretClient = await registerTestClient(ctx.store, {name: 'Secret', grants: ['pulses'], redirect_uris: []}, ctx.clock.now())
    expect(await refusal(await tokenRequest({client_assertion: await assertion(secretClient.client_id, es)}))).toMatch(/client registered for client_secret_basic/)
  })

  it('answers a malformed request with invalid_request, changing nothing', async () => {
    const {client_id} = await register()
    const good = await assertion(client_id, es)
    const wrongType = await ctx.app.request('/oauth/token', form({grant_type: 'client_credentials', client_assertion_type: 'jwt', client_assertion: good}))
    expect(wrongType.status).toBe(400)
    expect(await wrongType.json()).toMatchObject({error: 'invalid_request'})
    const both = await tokenRequest({client_assertion: good, client_secret: 'x'})
    expect(both.status).toBe(400)
    expect(await refusal(await tokenRequest({client_assertion: good, client_id: 'another'}))).toMatch(/client_id differs/)
    expect(await refusal(await tokenRequest({client_assertion: 'not.a.jwt'}))).toMatch(/not a signed JWT/)
    // None of those spent the assertion's jti.
    expect((await tokenRequest({client_assertion: good})).status).toBe(200)
  })

  it('authenticates introspection and revocation too, each assertion once', async () => {
    const {client_id} = await register()
    const issued = (await (await tokenRequest({client_assertion: await assertion(client_id, es)})).json()) as {access_token: string}
    const call = async (path: string) =>
      ctx.app.request(
        path,
        form({token: issued.access_token, client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: await assertion(client_id, es, {claims: {aud: `${ISSUER}${path}`}})}),
      )
    expect(await (await call('/oauth/introspect')).json()).toMatchObject({active: true, client_id})
    expect((await call('/oauth/revoke')).status).toBe(200)
    expect(await (await call('/oauth/introspect')).json()).toEqual({active: false})
  })

  it('discovery lists the method and its algorithms', async () => {
    const metadata = (await (await ctx.app.request('/.well-known/openid-configuration')).json()) as Record<string, string[]>
    expect(metadata.token_endpoint_auth_methods_supported).toContain('private_key_jwt')
    expect(metadata.token_endpoint_auth_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'RS256'])
    expect(metadata.introspection_endpoint_auth_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'RS256'])
  })
})

describe('registering keys', () => {
  const base = {
    name: 'P',
    url: 'https://p.example',
    logo_url: 'https://p.example/l.png',
    redirect_uris: ['https://p.example/cb'],
    token_endpoint_auth_method: 'private_key_jwt' as const,
  }

  it('refuses private keys, symmetric keys, sets without kids, both or neither of jwks and jwks_uri, and keys on other clients', async () => {
    const {privateKey} = await generateKeyPair('ES256', {extractable: true})
    const privateJwk = await exportJWK(privateKey)
    const refusals: [object, RegExp][] = [
      [{...base, jwks: {keys: [privateJwk]}}, /private key material/],
      [{...base, jwks: {keys: [{kty: 'oct', k: 'c2VjcmV0'}]}}, /kty must be RSA or EC/],
      [{...base, jwks: {keys: [{...es.jwk, kid: undefined}, rs.jwk]}}, /each needs a kid/],
      [{...base, jwks: {keys: [es.jwk]}, jwks_uri: 'https://p.example/jwks'}, /one of the two/],
      [{...base}, /one of the two/],
      [{...base, jwks_uri: 'http://keys.example/jwks'}, /must use https/],
      [{...base, jwks_uri: 'https://169.254.169.254/jwks'}, /must not point at/],
      [{...base, jwks: {keys: [es.jwk]}, grants: ['signon', 'balance']}, /only the signon and pulses grants/],
      [{...base, token_endpoint_auth_method: 'client_secret_basic', jwks: {keys: [es.jwk]}}, /for private_key_jwt clients only/],
      [{...base, jwks: {keys: [{kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA', kid: 'bad'}]}}, /key bad cannot be used/],
    ]
    for (const [input, message] of refusals) {
      await expect(registerClient(ctx.store, input as Parameters<typeof registerClient>[1], ctx.clock.now()), JSON.stringify(input).slice(0, 120)).rejects.toThrow(message)
    }
    expect((await ctx.db.selectFrom('clients').select('id').execute()).length).toBe(0)
  })

  it('update-client rotates the keys: an assertion by the new key is taken, the old key is refused', async () => {
    const {client_id} = await register({jwks: set(es.jwk)})
    const next = await signer('ES256', 'es-2')
    await updateClient(ctx.store, client_id, {jwks: set(next.jwk)}, ctx.clock.now())
    expect((await tokenRequest({client_assertion: await assertion(client_id, next)})).status).toBe(200)
    expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, es, {kid: 'es-2'})}))).toMatch(/signature/)
  })
})

describe('keys from a jwks_uri', () => {
  let server: Server
  let served: {keys: JWK[]}
  let fetches = 0
  let url: string

  beforeAll(async () => {
    server = createServer((req, res) => {
      fetches += 1
      // ?broken: the client's key server is failing.
      res.writeHead(req.url?.endsWith('?broken') ? 500 : 200, {'content-type': 'application/json'})
      res.end(JSON.stringify(served))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('fetches the set once, and again when an assertion names a kid the copy lacks (a rotation)', async () => {
    served = {keys: [es.jwk]}
    const {client_id} = await register({jwks_uri: url})
    const before = fetches
    expect((await tokenRequest({client_assertion: await assertion(client_id, es)})).status).toBe(200)
    expect((await tokenRequest({client_assertion: await assertion(client_id, es)})).status).toBe(200)
    expect(fetches - before).toBe(1)
    // The client rotates: its server now publishes a new key beside the old. Within 30 seconds of
    // the last fetch an unknown kid fetches nothing (it could be anyone's made-up kid) ...
    const next = await signer('RS256', 'rs-2')
    served = {keys: [es.jwk, next.jwk]}
    expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, next)}))).toMatch(/no key of the client's matches/)
    expect(fetches - before).toBe(1)
    // ... after it, the set is fetched again and the new key taken.
    ctx.clock.advance(31)
    expect((await tokenRequest({client_assertion: await assertion(client_id, next)})).status).toBe(200)
    expect(fetches - before).toBe(2)
    // Ten minutes on, the set is fetched again even for a known kid.
    ctx.clock.advance(601)
    expect((await tokenRequest({client_assertion: await assertion(client_id, es)})).status).toBe(200)
    expect(fetches - before).toBe(3)
  })

  it('refuses, in one line, a set that holds a private key', async () => {
    const {privateKey} = await generateKeyPair('ES256', {extractable: true})
    served = {keys: [{...(await exportJWK(privateKey)), kid: 'leaky'}]}
    const {client_id} = await register({jwks_uri: `${url}?leaky`})
    expect(await refusal(await tokenRequest({client_assertion: await assertion(client_id, es, {kid: 'leaky'})}))).toMatch(/did not answer a JWK Set of public signing keys/)
  })

  it('answers every client that failed to authenticate alike, and logs the reason without the assertion', async () => {
    served = {keys: [es.jwk]}
    const now = ctx.clock.now()
    const broken = await register({jwks_uri: `${url}?broken`})
    const unreachable = await register({jwks_uri: `http://127.0.0.1:${await freePort()}/jwks.json`})
    const good = await register({jwks: set(es.jwk)})
    const publicClient = await registerTestClient(ctx.store, {name: 'SPA', redirect_uris: ['https://spa.example/cb'], token_endpoint_auth_method: 'none'}, now)
    const secretClient = await registerTestClient(ctx.store, {name: 'Secret', grants: ['pulses'], redirect_uris: []}, now)
    const stranger = await signer('ES256', 'es-1')
    const cases: [string, string, Signer, RegExp][] = [
      ['unknown', 'no-such-client', es, /client_id=no-such-client: client_assertion for an unknown client/],
      ['public', publicClient.client_id, es, /client_assertion from a client registered for none/],
      ['secret', secretClient.client_id, es, /client_assertion from a client registered for client_secret_basic/],
      ['jwks_uri 500', broken.client_id, es, /jwks_uri answered 500/],
      ['jwks_uri unreachable', unreachable.client_id, es, /jwks_uri could not be read/],
      ['wrong key', good.client_id, stranger, /signature is not by any of the client's keys/],
    ]
    for (const [what, clientId, key, reason] of cases) {
      const presented = await assertion(clientId, key)
      const line = await refusal(await tokenRequest({client_assertion: presented}))
      expect(line, what).toMatch(reason)
      expect(line, what).toContain(`client_id=${clientId}`)
      expect(line, what).not.toContain(presented.split('.')[2])
    }
    // Introspection neither tells a public client from an unknown one.
    for (const [clientId, reason] of [
      [publicClient.client_id, /a public client cannot introspect/],
      ['no-such-client', /unknown client, named without a secret/],
    ] as const) {
      expect(await refusal(await ctx.app.request('/oauth/introspect', form({token: 'x', client_id: clientId})))).toMatch(reason)
    }
  })
})
