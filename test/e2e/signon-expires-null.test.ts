import * as openid from 'openid-client'
import * as oauth from 'oauth4webapi'
import {AuthorizationCode} from 'simple-oauth2'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'

/**
 * What client libraries do with the token answer of a client registered without a token lifetime
 * (`"expires_in": null`), against the real `serve`. docs/signon.md ("Tokens that never expire and
 * strict libraries") states exactly what these tests find; change both together.
 */
describe('a client without a token lifetime, as client libraries see it', () => {
  let server: RunningCli
  let registered: {client_id: string; client_secret: string; token_ttl: number | null}
  let redirectUri: string
  const member = {email: 'forever@clinic.example', password: 'forever-password-1'}
  const tokenInfo = (token: string) => fetch(`${server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}})

  beforeAll(async () => {
    const db = join(tempDir(), 'expires-null.db')
    server = await startCli(['serve', '--port', '0', '--no-worker', '--db', db])
    redirectUri = `${server.url}/app/callback`
    // No --token-ttl: the default is a token that never expires.
    registered = cliJson([
      'register-client',
      '--db',
      db,
      '--name',
      'Forever Partner',
      '--url',
      'https://forever.example',
      '--logo-url',
      'https://forever.example/logo.png',
      '--redirect-uri',
      redirectUri,
    ])
    cliJson([
      'add-member',
      '--db',
      db,
      '--email',
      member.email,
      '--password',
      member.password,
      '--first-name',
      'Nia',
      '--last-name',
      'Okoro',
      '--country',
      'US',
      '--specialty',
      'Oncology',
    ])
  })
  afterAll(async () => server?.stop())

  it('registers the client with no lifetime, so its token answers carry expires_in: null', () => {
    expect(registered.token_ttl).toBeNull()
  })

  it('oauth4webapi refuses the token answer: expires_in must be a number (the token was issued all the same)', async () => {
    const as: oauth.AuthorizationServer = {issuer: server.url, authorization_endpoint: `${server.url}/oauth/authorize`, token_endpoint: `${server.url}/oauth/token`}
    const client: oauth.Client = {client_id: registered.client_id}
    const state = oauth.generateRandomState()
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()
    const params = oauth.validateAuthResponse(as, client, await consentInBrowser(server.url, url, member), state)
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(registered.client_secret), params, redirectUri, verifier, {
      [oauth.allowInsecureRequests]: true,
    })
    expect(response.status).toBe(200)
    const refused = await oauth.processAuthorizationCodeResponse(as, client, response).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(oauth.OperationProcessingError)
    expect(refused).toMatchObject({code: oauth.INVALID_RESPONSE, message: '"response" body "expires_in" property must be a number'})
    // The server did issue a live token (the code is spent); the library keeps it from the caller.
    const body = (refused as oauth.OperationProcessingError).cause as {body: {access_token: string; expires_in: unknown}}
    expect(body.body.expires_in).toBeNull()
    expect(await (await tokenInfo(body.body.access_token)).json()).toMatchObject({expires_in_seconds: null})
  })

  it('openid-client, built on oauth4webapi, refuses it the same way', async () => {
    const config = await openid.discovery(new URL(server.url), registered.client_id, registered.client_secret, undefined, {
      algorithm: 'oauth2',
      execute: [openid.allowInsecureRequests],
    })
    const verifier = openid.randomPKCECodeVerifier()
    const state = openid.randomState()
    const url = openid.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      state,
      code_challenge: await openid.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const callback = await consentInBrowser(server.url, url, member)
    await expect(openid.authorizationCodeGrant(config, callback, {pkceCodeVerifier: verifier, expectedState: state})).rejects.toMatchObject({
      code: 'OAUTH_INVALID_RESPONSE',
      cause: {message: '"response" body "expires_in" property must be a number'},
    })
  })

  describe('simple-oauth2 5.1.0', () => {
    const simple = () => new AuthorizationCode({client: {id: registered.client_id, secret: registered.client_secret}, auth: {tokenHost: server.url}})
    async function token() {
      const so = simple()
      const callback = await consentInBrowser(server.url, new URL(so.authorizeURL({redirect_uri: redirectUri, state: 'simple-state'})), member)
      expect(callback.searchParams.get('state')).toBe('simple-state')
      return so.getToken({code: callback.searchParams.get('code')!, redirect_uri: redirectUri})
    }

    it('accepts the answer but computes an invalid expiry date, which it then never calls expired', async () => {
      const accessToken = await token()
      expect(accessToken.token.expires_in).toBeNull()
      // expires_at = now + parseInt(null) seconds: a Date object holding NaN.
      expect(accessToken.token.expires_at).toBeInstanceOf(Date)
      expect(Number.isNaN(accessToken.token.expires_at!.getTime())).toBe(true)
      expect(JSON.parse(JSON.stringify(accessToken.token)).expires_at).toBeNull()
      // NaN compares false, so expired() says no, even with a window.
      expect(accessToken.expired()).toBe(false)
      expect(accessToken.expired(3600)).toBe(false)
      expect((await tokenInfo(accessToken.token.access_token)).status).toBe(200)
    })

    it("revoke('access_token') resolves and the token is refused afterwards", async () => {
      const accessToken = await token()
      expect((await tokenInfo(accessToken.token.access_token)).status).toBe(200)
      await expect(accessToken.revoke('access_token')).resolves.toEqual({})
      const refused = await tokenInfo(accessToken.token.access_token)
      expect(refused.status).toBe(401)
      expect(await refused.json()).toMatchObject({error: 'invalid_request'})
    })

    it('revokeAll() resolves (its refresh-token call sends an empty token) and the token is refused afterwards', async () => {
      const accessToken = await token()
      expect((await tokenInfo(accessToken.token.access_token)).status).toBe(200)
      await expect(accessToken.revokeAll()).resolves.toBeUndefined()
      expect((await tokenInfo(accessToken.token.access_token)).status).toBe(401)
    })
  })
})
