import express, {type NextFunction, type Request, type Response} from 'express'
import session from 'express-session'
import passport from 'passport'
import OpenIDConnectStrategy from 'passport-openidconnect'
import {randomBytes} from 'node:crypto'
import type {Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {clientRegistration, MEMBER, memberClaims, startProvider, type Provider} from '../helpers/oidc.js'

interface Registered {
  client_id: string
  client_secret: string
  token_ttl: number | null
}

/**
 * passport-openidconnect as its README sets it up: an Express app with express-session, Passport's
 * session, the strategy given issuer, authorizationURL, tokenURL and userInfoURL (here read from
 * medpanel's /.well-known/openid-configuration), clientID, clientSecret, callbackURL and scope
 * ['profile', 'email'], and nothing else (so state in the session, no PKCE, no nonce, the client
 * secret in the token request's body). Two verify functions: the README's (issuer, profile, cb),
 * whose profile is the ID token's claims, and the nine-argument one, for which the library also
 * calls UserInfo and passes the token answer as received; each strategy is a client of its own,
 * so each sign-in is the member's first with its client and goes through the consent page. The
 * clients are registered the default way, without --token-ttl: their tokens never expire, and the
 * token answer of an OpenID request (the library always asks for `openid`) must then leave
 * expires_in out. The app listens on a loopback port; one cookie jar plays the browser on both
 * sites, as a browser's would (cookies are per host, not per port).
 */
describe('passport-openidconnect with its defaults', () => {
  let provider: Provider
  let rp: Server
  let origin: string
  /** One client per strategy, so each test's sign-in is the member's first with its client. */
  let readmeClient: Registered
  let userInfoClient: Registered
  let discovery: {issuer: string; authorization_endpoint: string; token_endpoint: string; userinfo_endpoint: string}
  /** What each verify function was called with, and the errors the app answered 500 for. */
  const verified: {issuer: string; profile: OpenIDConnectStrategy.Profile}[] = []
  const verifiedWithUserInfo: {issuer: string; uiProfile: any; idProfile: any; params: Record<string, unknown>}[] = []
  const errors: Error[] = []

  beforeAll(async () => {
    provider = await startProvider()
    discovery = await (await fetch(`${provider.server.url}/.well-known/openid-configuration`)).json()

    const app = express()
    // A Passport of this test's own, not the module's singleton.
    const authenticator = new passport.Passport()
    app.use(session({secret: randomBytes(32).toString('base64url'), resave: false, saveUninitialized: false}))
    app.use(authenticator.authenticate('session'))
    authenticator.serializeUser((user, done) => done(null, user))
    authenticator.deserializeUser((user: Express.User, done) => done(null, user))
    app.get('/login', authenticator.authenticate('medpanel'))
    app.get('/oauth2/redirect', authenticator.authenticate('medpanel', {successRedirect: '/me', failureRedirect: '/failed', failureMessage: true}))
    app.get('/login-userinfo', authenticator.authenticate('medpanel-userinfo'))
    app.get('/oauth2/redirect-userinfo', authenticator.authenticate('medpanel-userinfo', {successRedirect: '/me', failureRedirect: '/failed', failureMessage: true}))
    app.get('/me', (req, res) => {
      res.json({user: req.user ?? null})
    })
    app.get('/failed', (req, res) => {
      res.status(401).json({messages: (req.session as {messages?: string[]}).messages ?? []})
    })
    app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
      errors.push(error)
      res.status(500).type('text').send(`${error.name}: ${error.message}`)
    })
    rp = app.listen(0, '127.0.0.1')
    await new Promise<void>((listening, failed) => rp.once('listening', listening).once('error', failed))
    origin = `http://127.0.0.1:${(rp.address() as AddressInfo).port}`

    // No --token-ttl: the default, a token that never expires.
    readmeClient = cliJson(clientRegistration(provider.db, 'Passport RP', `${origin}/oauth2/redirect`))
    userInfoClient = cliJson(clientRegistration(provider.db, 'Passport UserInfo RP', `${origin}/oauth2/redirect-userinfo`))

    const options = (client: Registered, callbackURL: string): OpenIDConnectStrategy.StrategyOptions => ({
      issuer: discovery.issuer,
      authorizationURL: discovery.authorization_endpoint,
      tokenURL: discovery.token_endpoint,
      userInfoURL: discovery.userinfo_endpoint,
      clientID: client.client_id,
      clientSecret: client.client_secret,
      callbackURL,
      scope: ['profile', 'email'],
    })
    // The README's verify function: the profile the library parsed from the ID token.
    authenticator.use(
      'medpanel',
      new OpenIDConnectStrategy(
        options(readmeClient, `${origin}/oauth2/redirect`),
        (issuer: string, profile: OpenIDConnectStrategy.Profile, cb: OpenIDConnectStrategy.VerifyCallback) => {
          verified.push({issuer, profile})
          cb(null, {id: profile.id, displayName: profile.displayName, email: profile.emails?.[0]?.value})
        },
      ),
    )
    // Nine arguments: the library then also reads UserInfo, and passes the token answer along.
    authenticator.use(
      'medpanel-userinfo',
      new OpenIDConnectStrategy(
        options(userInfoClient, `${origin}/oauth2/redirect-userinfo`),
        (
          issuer: string,
          uiProfile: object,
          idProfile: object,
          _context: object,
          _idToken: string | object,
          _accessToken: string | object,
          _refreshToken: string,
          params: any,
          cb: OpenIDConnectStrategy.VerifyCallback,
        ) => {
          verifiedWithUserInfo.push({issuer, uiProfile, idProfile, params})
          cb(null, {id: (idProfile as {id: string}).id})
        },
      ),
    )
  })
  afterAll(async () => {
    if (rp?.listening) await new Promise((closed) => rp.close(closed))
    await provider?.server.stop()
  })

  /**
   * The browser's part: the app's login route, medpanel's sign-in and consent pages, the app's
   * callback route. Answers the authorize URL the browser was sent to and the app's /me.
   */
  async function signIn(browser: CookieBrowser, login: string, callbackPath: string) {
    errors.length = 0
    const started = await browser.request(`${origin}${login}`)
    expect(started.status).toBe(302)
    const authorize = new URL(started.headers.get('location')!)
    expect(authorize.origin + authorize.pathname).toBe(discovery.authorization_endpoint)

    const callback = await browser.authorize(authorize, MEMBER)
    expect(callback.origin + callback.pathname).toBe(`${origin}${callbackPath}`)
    const done = await browser.request(callback)
    expect(done.status, await done.clone().text()).toBe(302)
    // A failed sign-in goes to /failed, which shows the library's message.
    const failed = done.headers.get('location') === '/failed' ? await (await browser.request(`${origin}/failed`)).text() : ''
    expect(done.headers.get('location'), failed).toBe('/me')
    expect(errors).toEqual([])
    const me = await browser.request(`${origin}/me`)
    expect(me.status).toBe(200)
    return {authorize, me: (await me.json()) as {user: Record<string, unknown> | null}}
  }

  it('registers the relying parties the default way: their tokens never expire', () => {
    expect(readmeClient.token_ttl).toBeNull()
    expect(userInfoClient.token_ttl).toBeNull()
  })

  it("the README's setup signs the member in: state and `openid profile email` on medpanel's authorize URL, the verify callback gets the member from the ID token", async () => {
    const browser = new CookieBrowser(provider.server.url)
    const before = verified.length
    const {authorize, me} = await signIn(browser, '/login', '/oauth2/redirect')

    // What the library asked for: the code flow, openid before the configured scopes, a state kept
    // in the session, no PKCE and no nonce.
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      response_type: 'code',
      client_id: readmeClient.client_id,
      redirect_uri: `${origin}/oauth2/redirect`,
      scope: 'openid profile email',
      state: expect.any(String),
    })

    expect(verified.length).toBe(before + 1)
    const {issuer, profile} = verified.at(-1)!
    expect(issuer).toBe(provider.server.url)
    expect(profile).toEqual({
      id: provider.sub,
      displayName: `${MEMBER.first_name} ${MEMBER.last_name}`,
      name: {familyName: MEMBER.last_name, givenName: MEMBER.first_name},
      emails: [{value: MEMBER.email}],
    })
    // The app's session holds the user the verify function made.
    expect(browser.cookie('connect.sid')).toEqual(expect.any(String))
    expect(me).toEqual({user: {id: provider.sub, displayName: `${MEMBER.first_name} ${MEMBER.last_name}`, email: MEMBER.email}})
    expect(await (await fetch(`${origin}/me`)).json()).toEqual({user: null})
  })

  it('with UserInfo too: the same member from both, and the token answer of the OpenID request has no expires_in for a token that never expires', async () => {
    const before = verifiedWithUserInfo.length
    const {me} = await signIn(new CookieBrowser(provider.server.url), '/login-userinfo', '/oauth2/redirect-userinfo')
    expect(me).toEqual({user: {id: provider.sub}})

    expect(verifiedWithUserInfo.length).toBe(before + 1)
    const {issuer, uiProfile, idProfile, params} = verifiedWithUserInfo.at(-1)!
    expect(issuer).toBe(provider.server.url)
    const member = {
      id: provider.sub,
      displayName: `${MEMBER.first_name} ${MEMBER.last_name}`,
      name: {familyName: MEMBER.last_name, givenName: MEMBER.first_name},
      emails: [{value: MEMBER.email}],
    }
    expect(idProfile).toEqual(member)
    // The UserInfo profile keeps the answer as read: the member's claims, nothing else.
    expect(uiProfile).toMatchObject(member)
    expect(uiProfile._json).toEqual(memberClaims(provider.sub))

    // The token answer as the library received it (less refresh_token, which it takes out).
    expect(params).toMatchObject({access_token: expect.any(String), token_type: 'bearer', scope: 'openid profile email', id_token: expect.any(String)})
    expect(params).not.toHaveProperty('expires_in')
    // The token is live, and stays so: medpanel says it has no expiry.
    const info = await fetch(`${provider.server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${params.access_token}`}})
    expect(info.status).toBe(200)
    expect(await info.json()).toMatchObject({expires_in_seconds: null})
  })
})
