import * as client from 'openid-client'
import {createRemoteJWKSet, decodeProtectedHeader, jwtVerify} from 'jose'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {discover, signOn, startProvider, type IdTokenAlg, type Provider, type RelyingParty} from '../helpers/oidc.js'

interface Jwks {
  keys: {kid: string; alg: string; kty: string; use: string}[]
}

/**
 * ID-token signing keys over time, against the real `serve`: `rotate-signing-key` run from the
 * command line while the service runs, ID tokens before and after it, and what relying parties
 * (jose's remote key set, openid-client, oauth4webapi underneath) make of them.
 */
describe('ID-token signing keys: publication and rotation', () => {
  let provider: Provider
  let rs: RelyingParty
  let es: RelyingParty
  let jwksUri: URL

  beforeAll(async () => {
    provider = await startProvider()
    rs = provider.register('Rotation RS RP')
    es = provider.register('Rotation EC RP', 'ES256')
    jwksUri = new URL(`${provider.server.url}/oauth/jwks`)
  })
  afterAll(async () => provider?.server.stop())

  const jwks = async () => (await (await fetch(jwksUri)).json()) as Jwks
  const rpOf = (alg: IdTokenAlg) => (alg === 'RS256' ? rs : es)
  const verify = (idToken: string, keys: ReturnType<typeof createRemoteJWKSet>, alg: IdTokenAlg) =>
    jwtVerify(idToken, keys, {issuer: provider.server.url, audience: rpOf(alg).client_id, algorithms: [alg]})

  // Runs first, while no ES256 token was ever signed. The discovery document announces ES256; a
  // relying party that read the key set then must be able to check the first ES256 token, as it
  // can every RS256 one.
  it('the ES256 key is in the key set before the first ES256 ID token is signed', async () => {
    const browser = new CookieBrowser(provider.server.url)
    const relyingParty = createRemoteJWKSet(jwksUri)
    const first = await signOn(await discover(provider, rs), rs, browser)
    await verify(first.idToken, relyingParty, 'RS256')

    const elliptic = await signOn(await discover(provider, es), es, browser)
    const {kid} = decodeProtectedHeader(elliptic.idToken)
    // The key set jose read a moment ago must already name the key (it reads again only after 30 s).
    await expect(verify(elliptic.idToken, relyingParty, 'ES256')).resolves.toMatchObject({protectedHeader: {alg: 'ES256', kid}})
  })

  it('rotate-signing-key --now between two sign-ons: both ID tokens validate against the key set, under different kids, and the set lists both keys', async () => {
    const browser = new CookieBrowser(provider.server.url)
    const before = new Map<IdTokenAlg, string>()
    for (const alg of ['RS256', 'ES256'] as const) before.set(alg, (await signOn(await discover(provider, rpOf(alg)), rpOf(alg), browser)).idToken)
    const kidsBefore = new Map([...before].map(([alg, token]) => [alg, decodeProtectedHeader(token).kid!]))

    // --now (a leak): the new keys sign at once.
    const rotation = cliJson<{current: {kid: string; alg: string}[]; retired: {kid: string; published_until: string}[]}>(['rotate-signing-key', '--db', provider.db, '--now'])
    expect(rotation.current.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256'])
    expect(rotation.retired.map((key) => key.kid).sort()).toEqual([...kidsBefore.values()].sort())

    const after = new Map<IdTokenAlg, string>()
    for (const alg of ['RS256', 'ES256'] as const) after.set(alg, (await signOn(await discover(provider, rpOf(alg)), rpOf(alg), browser)).idToken)

    const published = await jwks()
    // A relying party that reads the key set now (jose, as openid-client and many others use it).
    const relyingParty = createRemoteJWKSet(jwksUri)
    for (const alg of ['RS256', 'ES256'] as const) {
      const oldKid = kidsBefore.get(alg)!
      const newKid = decodeProtectedHeader(after.get(alg)!).kid!
      expect(newKid, alg).not.toBe(oldKid)
      expect(rotation.current.find((key) => key.alg === alg)?.kid).toBe(newKid)
      expect(published.keys.filter((key) => key.alg === alg).map((key) => key.kid)).toEqual(expect.arrayContaining([oldKid, newKid]))
      await expect(verify(before.get(alg)!, relyingParty, alg)).resolves.toMatchObject({protectedHeader: {kid: oldKid}})
      await expect(verify(after.get(alg)!, relyingParty, alg)).resolves.toMatchObject({protectedHeader: {kid: newKid}})
    }
    // An ID token of the retired key is still a good id_token_hint: logout ends the session at once.
    const loggedOut = await browser.request(
      client.buildEndSessionUrl(await discover(provider, rs), {id_token_hint: before.get('RS256')!, post_logout_redirect_uri: rs.postLogoutRedirectUri, state: 'after-rotation'}),
    )
    expect(loggedOut.status).toBe(303)
    expect(new URL(loggedOut.headers.get('location')!).searchParams.get('state')).toBe('after-rotation')
  })

  it('a scheduled rotation publishes the new keys first: a relying party that read the set before it checks every later token', async () => {
    const browser = new CookieBrowser(provider.server.url)
    // openid-client with its signature check on (it reads jwks_uri and keeps the set), and jose.
    const config = await discover(provider, rs)
    client.enableNonRepudiationChecks(config)
    const relyingParty = createRemoteJWKSet(jwksUri)
    const before = await signOn(config, rs, browser)
    await verify(before.idToken, relyingParty, 'RS256')

    const rotation = cliJson<{current: {kid: string; alg: string; signs_from: string}[]}>(['rotate-signing-key', '--db', provider.db])
    // The old key signs on until the new one has been published ten minutes...
    const after = await signOn(await discover(provider, rs), rs, browser)
    expect(decodeProtectedHeader(after.idToken).kid).toBe(decodeProtectedHeader(before.idToken).kid)
    await expect(verify(after.idToken, relyingParty, 'RS256')).resolves.toMatchObject({payload: {sub: provider.sub}})
    await expect(signOn(config, rs, browser)).resolves.toMatchObject({tokens: {token_type: 'bearer'}})
    // ...and the key set already names the keys that take over then.
    const published = (await jwks()).keys.map((key) => key.kid)
    for (const key of rotation.current) expect(published).toContain(key.kid)
    expect(Date.parse(rotation.current[0]!.signs_from) - Date.now()).toBeGreaterThan(9 * 60_000)
  })
})
