import * as client from 'openid-client'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'

/**
 * openid-client, as partners use it, against the real `serve`: everything comes from discovery
 * (RFC 8414); no endpoint is configured by hand. It checks `iss` on the redirect itself.
 */
describe('sign-on with openid-client', () => {
  let server: RunningCli
  let config: client.Configuration
  let registered: {client_id: string; client_secret: string}
  let redirectUri: string
  const insecure = {execute: [client.allowInsecureRequests]}

  beforeAll(async () => {
    const db = join(tempDir(), 'openid.db')
    server = await startCli(['serve', '--port', '0', '--no-worker', '--db', db])
    redirectUri = `${server.url}/app/callback`
    // openid-client needs a number in expires_in (RFC 6749 §5.1): this client has a token lifetime.
    registered = cliJson([
      'register-client',
      '--db',
      db,
      '--name',
      'OIDC Partner',
      '--url',
      'https://oidc.example',
      '--logo-url',
      'https://oidc.example/l.png',
      '--redirect-uri',
      redirectUri,
      '--token-ttl',
      '900',
      '--grant',
      'signon,pulses',
    ])
    cliJson([
      'add-member',
      '--db',
      db,
      '--email',
      'oidc@clinic.example',
      '--password',
      'oidc-password-1',
      '--first-name',
      'Olu',
      '--last-name',
      'Ide',
      '--country',
      'GB',
      '--specialty',
      'Neurology',
    ])
    config = await client.discovery(new URL(server.url), registered.client_id, registered.client_secret, undefined, {algorithm: 'oauth2', ...insecure})
  })
  afterAll(async () => server?.stop())

  it('discovers every endpoint and PKCE support', () => {
    const metadata = config.serverMetadata()
    expect(metadata.issuer).toBe(server.url)
    expect(metadata.revocation_endpoint).toBe(`${server.url}/oauth/revoke`)
    expect(metadata.introspection_endpoint).toBe(`${server.url}/oauth/introspect`)
    expect(metadata.supportsPKCE()).toBe(true)
  })

  it('runs the code flow with PKCE and an iss it checks, then revokes and introspects through its own calls', async () => {
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'profile',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await consentInBrowser(server.url, url, {email: 'oidc@clinic.example', password: 'oidc-password-1'})
    expect(callback.searchParams.get('iss')).toBe(server.url)
    const tokens = await client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state})
    expect(tokens.expires_in).toBe(900)

    const me = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${server.url}/user/oauth/user/info`), 'GET')
    expect(await me.json()).toEqual({first_name: 'Olu', last_name: 'Ide', country_of_practice: 'GB', primary_specialty: 'Neurology'})

    const introspected = await client.tokenIntrospection(config, tokens.access_token)
    expect(introspected).toMatchObject({active: true, client_id: registered.client_id, scope: 'profile', token_type: 'bearer'})

    await client.tokenRevocation(config, tokens.access_token)
    expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({active: false})
    expect((await fetch(`${server.url}/user/oauth/token/info`, {headers: {authorization: `Bearer ${tokens.access_token}`}})).status).toBe(401)
  })

  it('refuses a redirect whose iss names another issuer (the mix-up defence works end to end)', async () => {
    const state = client.randomState()
    const verifier = client.randomPKCECodeVerifier()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'profile',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await consentInBrowser(server.url, url, {email: 'oidc@clinic.example', password: 'oidc-password-1'})
    callback.searchParams.set('iss', 'https://attacker.example')
    await expect(client.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state})).rejects.toMatchObject({
      cause: {message: expect.stringMatching(/"iss" \(issuer\)/)},
    })
  })

  it('gets a client_credentials token for the pulses client', async () => {
    const tokens = await client.clientCredentialsGrant(config, {scope: 'pulses'})
    expect(tokens.token_type).toBe('bearer')
    const info = await fetch(`${server.url}/clients/info`, {headers: {authorization: `Bearer ${tokens.access_token}`}})
    expect(info.status).toBe(200)
  })
})
