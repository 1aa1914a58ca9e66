import * as oauth from 'oauth4webapi'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {expectedAtHash, jwtHeader, MEMBER, memberClaims, startProvider, type Provider, type RelyingParty} from '../helpers/oidc.js'

/**
 * oauth4webapi, the low-level library under openid-client, step by step: OpenID discovery, the
 * code flow with PKCE and nonce, the token response processed as an OpenID one (an ID token
 * required), its claims validated, its signature checked against jwks_uri, and UserInfo with the
 * subject compared. The library itself refuses a wrong nonce.
 */
describe('OpenID Connect with oauth4webapi', () => {
  let provider: Provider
  let as: oauth.AuthorizationServer
  let rs: RelyingParty
  let es: RelyingParty
  const insecure = {[oauth.allowInsecureRequests]: true}

  beforeAll(async () => {
    provider = await startProvider()
    rs = provider.register('Web API RP')
    es = provider.register('Web API EC RP', 'ES256')
    const issuer = new URL(provider.server.url)
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, {algorithm: 'oidc', ...insecure}))
  })
  afterAll(async () => provider?.server.stop())

  /** Runs the browser part and the token request; answers the token endpoint's raw response. */
  async function codeFlow(rp: RelyingParty, scope: string, nonce: string | undefined, client: oauth.Client = {client_id: rp.client_id}) {
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: rp.client_id,
      redirect_uri: rp.redirectUri,
      response_type: 'code',
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(nonce === undefined ? {} : {nonce}),
    }).toString()
    const callback = await new CookieBrowser(provider.server.url).authorize(url, MEMBER)
    const params = oauth.validateAuthResponse(as, client, callback, state)
    return oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(rp.client_secret), params, rp.redirectUri, verifier, insecure)
  }

  it('discovers the OpenID endpoints', () => {
    expect(as).toMatchObject({
      issuer: provider.server.url,
      jwks_uri: `${provider.server.url}/oauth/jwks`,
      userinfo_endpoint: `${provider.server.url}/oauth/userinfo`,
      end_session_endpoint: `${provider.server.url}/oauth/end_session`,
      id_token_signing_alg_values_supported: ['RS256', 'ES256'],
    })
  })

  for (const which of ['RS256', 'ES256'] as const) {
    it(`${which}: an ID token the library requires and validates, signed by a key of jwks_uri, then UserInfo for its subject`, async () => {
      const rp = which === 'RS256' ? rs : es
      const client: oauth.Client = {client_id: rp.client_id, id_token_signed_response_alg: which}
      const nonce = oauth.generateRandomNonce()
      const response = await codeFlow(rp, 'openid profile email', nonce, client)
      const result = await oauth.processAuthorizationCodeResponse(as, client, response, {expectedNonce: nonce, requireIdToken: true, maxAge: 300})
      const claims = oauth.getValidatedIdTokenClaims(result)!
      expect(claims).toMatchObject({...memberClaims(provider.sub), iss: provider.server.url, aud: rp.client_id, nonce, at_hash: expectedAtHash(result.access_token)})
      expect(claims.exp - claims.iat).toBe(3600)
      expect(jwtHeader(result.id_token!)).toMatchObject({alg: which, typ: 'JWT'})
      // The library checks the signature with the key the header's kid names in jwks_uri. It keeps
      // the key set it read per server object for minutes, and the ES256 key only exists since the
      // first ES256 token: a copy of the metadata reads the set afresh (oidc-rotation.test.ts has
      // the relying party that does not).
      await expect(oauth.validateApplicationLevelSignature({...as}, response, insecure)).resolves.toBeUndefined()

      const info = await oauth.userInfoRequest(as, client, result.access_token, insecure)
      expect(await oauth.processUserInfoResponse(as, client, claims.sub, info)).toEqual(memberClaims(provider.sub))
      const again = await oauth.userInfoRequest(as, client, result.access_token, insecure)
      await expect(oauth.processUserInfoResponse(as, client, '999999', again)).rejects.toMatchObject({code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED'})
    })
  }

  it('the library refuses an ID token whose nonce is not the one it sent, or that carries one it did not send', async () => {
    const client = {client_id: rs.client_id}
    const wrong = await codeFlow(rs, 'openid', oauth.generateRandomNonce(), client)
    await expect(oauth.processAuthorizationCodeResponse(as, client, wrong, {expectedNonce: oauth.generateRandomNonce(), requireIdToken: true})).rejects.toMatchObject({
      code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
      cause: {claim: 'nonce'},
    })
    const unexpected = await codeFlow(rs, 'openid', oauth.generateRandomNonce(), client)
    await expect(oauth.processAuthorizationCodeResponse(as, client, unexpected, {requireIdToken: true})).rejects.toMatchObject({
      code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
      cause: {claim: 'nonce'},
    })
    // Without a nonce in the request, the ID token has none, and the library is content.
    const none = await codeFlow(rs, 'openid', undefined, client)
    const result = await oauth.processAuthorizationCodeResponse(as, client, none, {requireIdToken: true})
    expect(oauth.getValidatedIdTokenClaims(result)).not.toHaveProperty('nonce')
    // openid alone: sub and the protocol claims, nothing about the member.
    expect(Object.keys(oauth.getValidatedIdTokenClaims(result)!).sort()).toEqual(['at_hash', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'sid', 'sub'])
  })

  it('an ID token of the other algorithm than the client expects is refused by the library', async () => {
    const client: oauth.Client = {client_id: es.client_id, id_token_signed_response_alg: 'RS256'}
    const nonce = oauth.generateRandomNonce()
    const response = await codeFlow(es, 'openid', nonce, client)
    await expect(oauth.processAuthorizationCodeResponse(as, client, response, {expectedNonce: nonce})).rejects.toMatchObject({
      message: 'unexpected JWT "alg" header parameter',
      cause: {header: {alg: 'ES256'}, expected: 'RS256'},
    })
  })

  it('without openid: no ID token (the library, told to require one, refuses), and UserInfo answers insufficient_scope', async () => {
    // A plain OAuth request keeps the seed's "expires_in": null for a token that never expires,
    // which oauth4webapi refuses before it looks for an ID token: this client has a lifetime.
    const plain = provider.register('Plain OAuth RP')
    cliJson(['update-client', '--db', provider.db, plain.client_id, '--token-ttl', '900'], {}, provider.launcher)
    const client = {client_id: plain.client_id}
    const response = await codeFlow(plain, 'profile', undefined, client)
    const body = await response.clone().json()
    expect(body).not.toHaveProperty('id_token')
    await expect(oauth.processAuthorizationCodeResponse(as, client, response, {requireIdToken: true})).rejects.toMatchObject({
      message: expect.stringContaining('"id_token"'),
    })
    const info = await oauth.userInfoRequest(as, client, body.access_token, insecure)
    expect(info.status).toBe(403)
    await expect(oauth.processUserInfoResponse(as, client, provider.sub, info)).rejects.toMatchObject({
      cause: [expect.objectContaining({scheme: 'bearer', parameters: expect.objectContaining({error: 'insufficient_scope', scope: 'openid'})})],
    })
  })
})
