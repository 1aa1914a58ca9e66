import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {exportJWK, generateKeyPair, SignJWT} from 'jose'
import * as client from 'openid-client'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, memberRegistration, type RunningCli, startCli, tempDir} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {MEMBER} from '../helpers/oidc.js'
import {storeFlags} from '../helpers/store.js'

/**
 * private_key_jwt as a relying party meets it: openid-client v6's own PrivateKeyJwt against a real
 * `serve`, for the code flow (also pushed first, PAR), client credentials, introspection and revocation; and a used
 * assertion refused by a second `serve` on the same store.
 */
describe('private_key_jwt with openid-client, against two serve processes on one store', () => {
  const dir = tempDir('medpanel-pkjwt-')
  let store: string[]
  let first: RunningCli
  let second: RunningCli
  let clientId: string
  let privateKey: CryptoKey
  const redirectUri = 'https://health.example/callback'
  const insecure = {execute: [client.allowInsecureRequests]}

  beforeAll(async () => {
    store = storeFlags(join(dir, 'pkjwt.db'))
    const pair = await generateKeyPair('ES256', {extractable: true})
    privateKey = pair.privateKey
    const jwksFile = join(dir, 'client-jwks.json')
    writeFileSync(jwksFile, JSON.stringify({keys: [{...(await exportJWK(pair.publicKey)), kid: 'health-2026', use: 'sig', alg: 'ES256'}]}))
    cliJson(memberRegistration(store, {email: MEMBER.email, password: MEMBER.password}))
    const registered = cliJson<{client_id: string; jwks_key_ids: string[]; client_secret?: string}>([
      'register-client',
      ...store,
      '--name',
      'Health Partner',
      '--url',
      'https://health.example',
      '--logo-url',
      'https://health.example/logo.png',
      '--redirect-uri',
      redirectUri,
      '--grant',
      'signon,pulses',
      // A lifetime, so client tokens carry expires_in as a number (without one the spec's answer
      // is null, which openid-client refuses: docs/signon.md, "expires_in").
      '--token-ttl',
      '3600',
      '--token-endpoint-auth-method',
      'private_key_jwt',
      '--jwks-file',
      jwksFile,
    ])
    expect(registered.jwks_key_ids).toEqual(['health-2026'])
    expect(registered.client_secret).toBeUndefined()
    clientId = registered.client_id
    first = await startCli(['serve', ...store, '--port', '0', '--no-worker'])
    // Two processes behind one name, as a load balancer would have them: one issuer for both.
    second = await startCli(['serve', ...store, '--port', '0', '--no-worker', '--base-url', first.url])
  })
  afterAll(async () => {
    await first?.stop()
    await second?.stop()
  })

  const configFor = (server: RunningCli) => client.discovery(new URL(server.url), clientId, undefined, client.PrivateKeyJwt({key: privateKey, kid: 'health-2026'}), insecure)

  it('signs a member in with the code flow, the client proving itself with its key', async () => {
    const config = await configFor(first)
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('private_key_jwt')
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await new CookieBrowser(first.url).authorize(url, MEMBER)
    const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state})
    expect(tokens.access_token).toBeTruthy()
    expect(tokens.claims()?.aud).toBe(clientId)
  })

  it('pushes its authorization request first (PAR), the browser carrying only the request_uri', async () => {
    const config = await configFor(first)
    expect(config.serverMetadata().pushed_authorization_request_endpoint).toBe(`${first.url}/oauth/par`)
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
    const callback = await new CookieBrowser(first.url).authorize(url, MEMBER)
    const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state})
    expect(tokens.claims()?.aud).toBe(clientId)
    // The request_uri was answered: the same address leads nowhere now.
    const again = await fetch(url)
    expect(again.status).toBe(400)
  })

  it('gets a client token, introspects and revokes it, each request with a fresh assertion', async () => {
    const config = await configFor(first)
    const tokens = await client.clientCredentialsGrant(config, {scope: 'pulses'})
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(true)
    await client.tokenRevocation(config, tokens.access_token)
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false)
  })

  it('refuses an assertion one serve took when it reaches the other', async () => {
    const now = Math.floor(Date.now() / 1000)
    const assertion = await new SignJWT({iss: clientId, sub: clientId, aud: `${first.url}/oauth/token`, jti: `replay-${now}`, iat: now, exp: now + 60})
      .setProtectedHeader({alg: 'ES256', kid: 'health-2026'})
      .sign(privateKey)
    const post = (server: RunningCli) =>
      fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: {'content-type': 'application/x-www-form-urlencoded'},
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        }),
      })
    expect((await post(first)).status).toBe(200)
    const again = await post(second)
    expect(again.status).toBe(401)
    // The client is told only that it failed; the operator's log of that serve says why.
    expect(await again.json()).toEqual({error: 'invalid_client', error_description: 'client authentication failed'})
    const id = again.headers.get('x-request-id')
    const logged = () =>
      second
        .stderr()
        .split('\n')
        .find((line) => line.startsWith(`refused id=${id} `))
    for (let waited = 0; logged() === undefined && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(logged()).toMatch(/jti was presented before/)
  })
})
