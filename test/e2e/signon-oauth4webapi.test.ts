import * as oauth from 'oauth4webapi'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cli, cliJson, startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {consentInBrowser} from '../helpers/consent.js'

/**
 * The real CLI and server, driven by a real OAuth client library. The browser's part (sign in,
 * press Allow) is done with fetch and a cookie header, as a user agent would.
 */
describe('sign-on end to end with oauth4webapi', () => {
  const db = join(tempDir(), 'signon.db')
  let server: RunningCli
  let as: oauth.AuthorizationServer
  let client: {client_id: string; client_secret: string}
  let member: {user_id: number}
  let redirectUri: string
  const insecure = {[oauth.allowInsecureRequests]: true}

  beforeAll(async () => {
    server = await startCli(['serve', '--port', '0', '--db', db])
    redirectUri = `${server.url}/app/callback`
    client = cliJson([
      'register-client',
      '--db',
      db,
      '--name',
      'E2E Partner',
      '--url',
      'https://e2e.example',
      '--logo-url',
      'https://e2e.example/logo.png',
      '--redirect-uri',
      redirectUri,
      '--token-ttl',
      '900',
      '--grant',
      'signon,pulses',
    ])
    member = cliJson([
      'add-member',
      '--db',
      db,
      '--email',
      'e2e@clinic.example',
      '--password',
      'e2e-password-1',
      '--first-name',
      'Eve',
      '--last-name',
      'Ito',
      '--country',
      'CA',
      '--specialty',
      'Neurology',
    ])
    as = {issuer: server.url, authorization_endpoint: `${server.url}/oauth/authorize`, token_endpoint: `${server.url}/oauth/token`}
  })
  afterAll(async () => {
    await server?.stop()
  })

  const consent = (authorizeUrl: URL) => consentInBrowser(server.url, authorizeUrl, {email: 'e2e@clinic.example', password: 'e2e-password-1'})

  it('authorization code + PKCE, token info, member info, then the replay revokes', async () => {
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'profile',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString()

    const callback = await consent(url)
    const params = oauth.validateAuthResponse(as, {client_id: client.client_id}, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      {client_id: client.client_id},
      oauth.ClientSecretBasic(client.client_secret),
      params,
      redirectUri,
      verifier,
      insecure,
    )
    const tokens = await oauth.processAuthorizationCodeResponse(as, {client_id: client.client_id}, response)
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.expires_in).toBe(900)

    const info = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${server.url}/user/oauth/token/info`), undefined, undefined, insecure)
    expect(await info.json()).toMatchObject({resource_owner_id: member.user_id, scopes: ['profile'], application: {uid: client.client_id}})
    const me = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${server.url}/oauth/user/info`), undefined, undefined, insecure)
    expect(await me.json()).toEqual({first_name: 'Eve', last_name: 'Ito', country_of_practice: 'CA', primary_specialty: 'Neurology'})

    const replay = await oauth.authorizationCodeGrantRequest(
      as,
      {client_id: client.client_id},
      oauth.ClientSecretBasic(client.client_secret),
      params,
      redirectUri,
      verifier,
      insecure,
    )
    await expect(oauth.processAuthorizationCodeResponse(as, {client_id: client.client_id}, replay)).rejects.toMatchObject({error: 'invalid_grant'})
    const after = await fetch(`${server.url}/user/oauth/token/info`, {headers: {authorization: `Bearer ${tokens.access_token}`}})
    expect(after.status).toBe(401)
  })

  it('client_credentials for a pulses client', async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, {client_id: client.client_id}, oauth.ClientSecretPost(client.client_secret), new URLSearchParams(), insecure)
    const tokens = await oauth.processClientCredentialsResponse(as, {client_id: client.client_id}, response)
    expect(tokens.scope).toBe('pulses')
  })

  describe('operator commands kill live tokens: update-member --password, then revoke-consent', () => {
    // In order, each on a token issued to the member just before.
    const issue = () => cliJson<{access_token: string}>(['issue-token', '--db', db, '--member', String(member.user_id), '--client', client.client_id]).access_token
    const check = (token: string) => fetch(`${server.url}/user/oauth/token/info`, {headers: {authorization: `Bearer ${token}`}}).then((r) => r.status)

    it('update-member --password revokes the live token it had', async () => {
      const first = issue()
      expect(await check(first)).toBe(200)
      expect(cliJson(['update-member', String(member.user_id), '--db', db, '--password', 'e2e-password-2'])).toMatchObject({revoked_tokens: 1})
      expect(await check(first)).toBe(401)
    })

    it("revoke-consent revokes the member's token for that client", async () => {
      const second = issue()
      expect(cliJson(['revoke-consent', String(member.user_id), '--db', db, '--client', client.client_id])).toEqual({
        user_id: member.user_id,
        client_id: client.client_id,
        revoked_tokens: 1,
      })
      expect(await check(second)).toBe(401)
    })

    it("update-client --token-ttl revokes the client's live tokens, client_credentials ones included", async () => {
      const third = issue()
      // Also kills the client_credentials token of the test above: 2 in all.
      expect(cliJson(['update-client', client.client_id, '--db', db, '--token-ttl', '60'])).toMatchObject({token_ttl: 60, revoked_tokens: 2})
      expect(await check(third)).toBe(401)
    })

    it("update-member --deactivate kills the member's token; --activate lets the member back", async () => {
      const fourth = issue()
      expect(cli(['update-member', String(member.user_id), '--db', db, '--deactivate']).status).toBe(0)
      expect(await check(fourth)).toBe(401)
      expect(cli(['update-member', String(member.user_id), '--db', db, '--activate']).status).toBe(0)
    })

    it("update-client --expire revokes the client's tokens", async () => {
      const fifth = issue()
      expect(cliJson(['update-client', client.client_id, '--db', db, '--expire'])).toMatchObject({expired: true, revoked_tokens: 1})
      expect(await check(fifth)).toBe(401)
    })
  })

  it('serve stops cleanly on SIGTERM', async () => {
    const other = await startCli(['serve', '--port', '0', '--db', join(tempDir(), 'stop.db')])
    expect((await fetch(`${other.url}/healthz`)).status).toBe(200)
    expect(await other.stop('SIGTERM')).toBe(0)
  })
})
