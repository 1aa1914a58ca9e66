import {createHash, randomUUID} from 'node:crypto'
import {join} from 'node:path'
import {exportJWK, generateKeyPair, SignJWT} from 'jose'
import * as client from 'openid-client'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, memberRegistration, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {MEMBER} from '../helpers/oidc.js'
import {storeFlags} from '../helpers/store.js'

/**
 * DPoP as a relying party meets it: openid-client v6's own getDPoPHandle, for a public client
 * registered with --require-dpop, against a real `serve`: the code flow, UserInfo, a protected
 * resource and a refresh, nonces learned as the library learns them; a pushed request whose proof
 * binds the code. And a proof one `serve`
 * accepted, refused by a second `serve` on the same store.
 */
describe('DPoP with openid-client, against two serve processes on one store', () => {
  const dir = tempDir('medpanel-dpop-')
  let store: string[]
  let first: RunningCli
  let second: RunningCli
  let clientId: string
  let keys: CryptoKeyPair
  const redirectUri = 'https://health.example/callback'
  const insecure = {execute: [client.allowInsecureRequests]}

  beforeAll(async () => {
    store = storeFlags(join(dir, 'dpop.db'))
    keys = await generateKeyPair('ES256')
    cliJson(memberRegistration(store, {email: MEMBER.email, password: MEMBER.password}))
    const registered = cliJson<{client_id: string; dpop_bound_access_tokens: boolean}>([
      'register-client',
      ...store,
      '--name',
      'Health App',
      '--url',
      'https://health.example',
      '--logo-url',
      'https://health.example/logo.png',
      '--redirect-uri',
      redirectUri,
      '--token-endpoint-auth-method',
      'none',
      '--require-dpop',
    ])
    expect(registered.dpop_bound_access_tokens).toBe(true)
    clientId = registered.client_id
    first = await startCli(['serve', ...store, '--port', '0', '--no-worker'])
    // Two processes behind one name, as a load balancer would have them: one issuer for both.
    second = await startCli(['serve', ...store, '--port', '0', '--no-worker', '--base-url', first.url])
  })
  afterAll(async () => {
    await first?.stop()
    await second?.stop()
  })

  const configFor = (server: RunningCli) => client.discovery(new URL(server.url), clientId, undefined, client.None(), insecure)

  async function signOn(config: client.Configuration, dpop: client.DPoPHandle | undefined) {
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile offline_access',
      prompt: 'consent',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await new CookieBrowser(first.url).authorize(url, MEMBER)
    return client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state}, undefined, dpop ? {DPoP: dpop} : undefined)
  }

  it('signs in, calls UserInfo and token info, and refreshes, every request with a proof of one key', async () => {
    const config = await configFor(first)
    expect(config.serverMetadata().dpop_signing_alg_values_supported).toEqual(['ES256', 'PS256', 'RS256'])
    const dpop = client.getDPoPHandle(config, keys)
    const tokens = await signOn(config, dpop)
    expect(tokens.token_type).toBe('dpop')
    const sub = tokens.claims()!.sub
    expect((await client.fetchUserInfo(config, tokens.access_token, sub, {DPoP: dpop})).sub).toBe(sub)
    const info = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${first.url}/oauth/token/info`), 'GET', undefined, undefined, {DPoP: dpop})
    expect(info.status).toBe(200)
    // The same token without its key is worthless, and so is the refresh token.
    const bare = await fetch(`${first.url}/oauth/token/info`, {headers: {authorization: `Bearer ${tokens.access_token}`}})
    expect([bare.status, bare.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^DPoP /)])
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({error: 'invalid_request'})
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!, undefined, {DPoP: client.getDPoPHandle(config, await generateKeyPair('ES256'))})).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/bound to another DPoP key than the one the DPoP proof is signed with/),
    })
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, {DPoP: dpop})
    expect(refreshed.token_type).toBe('dpop')
    expect((await client.fetchUserInfo(config, refreshed.access_token, sub, {DPoP: dpop})).sub).toBe(sub)
  })

  it('binds the code to the key of the proof sent with a pushed request: another key cannot exchange it', async () => {
    const config = await configFor(first)
    const dpop = client.getDPoPHandle(config, keys)
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const params = {redirect_uri: redirectUri, scope: 'openid profile', state, code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256'}
    const url = await client.buildAuthorizationUrlWithPAR(config, params, {DPoP: dpop})
    const callback = await new CookieBrowser(first.url).authorize(url, MEMBER)
    const thief = client.getDPoPHandle(config, await generateKeyPair('ES256'))
    await expect(client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state}, undefined, {DPoP: thief})).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/bound to a DPoP key/),
    })
    const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state}, undefined, {DPoP: dpop})
    expect(tokens.token_type).toBe('dpop')
  })

  it('gives a client registered with --require-dpop no token without a proof', async () => {
    const config = await configFor(first)
    await expect(signOn(config, undefined)).rejects.toMatchObject({error: 'invalid_request', error_description: expect.stringMatching(/only DPoP-bound tokens/)})
  })

  it('refuses a proof one serve accepted when it reaches the other', async () => {
    const config = await configFor(first)
    const tokens = await signOn(config, client.getDPoPHandle(config, keys))
    const path = '/oauth/token/info'
    const learned = await fetch(`${first.url}${path}`, {headers: {authorization: `DPoP ${tokens.access_token}`, dpop: await proofFor(path, tokens.access_token)}})
    const nonce = learned.headers.get('dpop-nonce')!
    const proof = await proofFor(path, tokens.access_token, nonce)
    const present = (server: RunningCli) => fetch(`${server.url}${path}`, {headers: {authorization: `DPoP ${tokens.access_token}`, dpop: proof}})
    expect((await present(first)).status).toBe(200)
    const again = await present(second)
    expect(again.status).toBe(401)
    expect(await again.json()).toMatchObject({error: 'invalid_dpop_proof', error_description: expect.stringMatching(/presented before/)})
  })

  async function proofFor(path: string, accessToken: string, nonce?: string): Promise<string> {
    const claims = {
      htm: 'GET',
      htu: `${first.url}${path}`,
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      ath: createHash('sha256').update(accessToken).digest('base64url'),
      ...(nonce === undefined ? {} : {nonce}),
    }
    return new SignJWT(claims).setProtectedHeader({alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keys.publicKey)}).sign(keys.privateKey)
  }
})
