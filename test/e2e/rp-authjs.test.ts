import {Auth, customFetch, type AuthConfig} from '@auth/core'
import type {Account, Profile} from '@auth/core/types'
import {randomBytes} from 'node:crypto'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cliJson} from '../helpers/cli.js'
import {CookieBrowser} from '../helpers/oidc-browser.js'
import {clientRegistration, MEMBER, memberClaims, startProvider, type Provider} from '../helpers/oidc.js'

/**
 * Auth.js (@auth/core, the framework-agnostic core every Auth.js adapter wraps) as a relying party
 * would configure it for an OpenID provider it has no built-in for: the generic `type: 'oidc'`
 * provider with issuer, client id and secret and nothing else, so everything is the library's
 * default (discovery by /.well-known/openid-configuration, checks ['pkce'] and so no state or
 * nonce, scope `openid profile email`, client_secret_basic, the profile from the ID token, a JWT
 * session cookie). The client is registered the default way, without --token-ttl: its tokens never
 * expire, and the token answer of an OpenID request must then leave expires_in out (Auth.js hands
 * it to oauth4webapi, which refuses `"expires_in": null`). Auth.js runs behind a node:http server
 * on a loopback port, and one cookie jar plays the browser on both sites, as a browser's would
 * (cookies are per host, not per port): Auth.js's CSRF endpoint, its sign-in POST, medpanel's
 * sign-in and consent pages, Auth.js's callback, then its session endpoint.
 */
describe('Auth.js (@auth/core) with a generic OIDC provider, its defaults', () => {
  let provider: Provider
  let rp: Server
  let origin: string
  let config: AuthConfig
  let registered: {client_id: string; client_secret: string; token_ttl: number | null}
  /** Every request Auth.js made to medpanel, and the token endpoint's answers as received. */
  const fetched: string[] = []
  const tokenAnswers: Record<string, unknown>[] = []
  /** What Auth.js's signIn callback saw, and what it logged as errors. */
  const signIns: {account: Account | null | undefined; profile: Profile | undefined}[] = []
  const errors: Error[] = []

  /** The adapter a framework would be: node:http in, a Web Request to Auth(), its Response back. */
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one)
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
    const response = await Auth(new Request(new URL(req.url!, origin), {method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined}), config)
    res.statusCode = response.status
    for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value)
    const cookies = response.headers.getSetCookie()
    if (cookies.length > 0) res.setHeader('set-cookie', cookies)
    res.end(Buffer.from(await response.arrayBuffer()))
  }

  beforeAll(async () => {
    provider = await startProvider()
    rp = createServer((req, res) => {
      handle(req, res).catch((error: unknown) => {
        errors.push(error as Error)
        res.statusCode = 500
        res.end(String(error))
      })
    })
    await new Promise<void>((listening) => rp.listen(0, '127.0.0.1', listening))
    origin = `http://127.0.0.1:${(rp.address() as AddressInfo).port}`
    // No --token-ttl: the default, a token that never expires. The redirect URI is exactly the
    // callback URL Auth.js derives from its base path and the provider id.
    registered = cliJson(clientRegistration(provider.db, 'Auth.js RP', `${origin}/auth/callback/medpanel`))
    const recording: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input)
      fetched.push(url)
      const response = await fetch(input, init)
      if (url === `${provider.server.url}/oauth/token`) tokenAnswers.push(await response.clone().json())
      return response
    }
    config = {
      basePath: '/auth',
      trustHost: true,
      secret: randomBytes(32).toString('base64url'),
      providers: [
        {
          id: 'medpanel',
          name: 'medpanel',
          type: 'oidc',
          issuer: provider.server.url,
          clientId: registered.client_id,
          clientSecret: registered.client_secret,
          // Only records: Auth.js's own fetch does the work.
          [customFetch]: recording,
        },
      ],
      callbacks: {
        signIn({account, profile}) {
          signIns.push({account, profile})
          return true
        },
      },
      logger: {error: (error) => errors.push(error)},
    }
  })
  afterAll(async () => {
    if (rp?.listening) await new Promise((closed) => rp.close(closed))
    await provider?.server.stop()
  })

  /**
   * The browser's part, from the relying party's page to its session: the CSRF token, the sign-in
   * POST, medpanel's sign-in and consent pages, the callback. Answers the browser and the authorize
   * URL it was sent to.
   */
  async function signIn(browser: CookieBrowser) {
    const csrf = await browser.request(`${origin}/auth/csrf`)
    expect(csrf.status).toBe(200)
    const {csrfToken} = (await csrf.json()) as {csrfToken: string}
    const started = await browser.request(`${origin}/auth/signin/medpanel`, {
      method: 'POST',
      headers: {origin},
      body: new URLSearchParams({csrfToken, callbackUrl: `${origin}/dashboard`}),
    })
    expect(started.status, await started.clone().text()).toBe(302)
    const authorize = new URL(started.headers.get('location')!)
    expect(authorize.origin + authorize.pathname).toBe(`${provider.server.url}/oauth/authorize`)

    const callback = await browser.authorize(authorize, MEMBER)
    expect(callback.origin + callback.pathname).toBe(`${origin}/auth/callback/medpanel`)
    const done = await browser.request(callback)
    expect(done.status, await done.clone().text()).toBe(302)
    // Auth.js answers a failed callback with a redirect to its error page; its logger has the cause.
    expect(done.headers.get('location'), errors.map((error) => `${error.name}: ${error.message} ${String((error.cause as any)?.err ?? '')}`).join('\n')).toBe(`${origin}/dashboard`)
    return {browser, authorize}
  }

  /**
   * The member signs in once, the first time they meet this client, so on the consent page
   * (medpanel may skip it for a client the member already allowed); the tests below look at that
   * one sign-in from two sides, whichever of them runs first.
   */
  let first: ReturnType<typeof signIn> | undefined
  const signedIn = () => (first ??= signIn(new CookieBrowser(provider.server.url)))

  it('registers the relying party the default way: its tokens never expire', () => {
    expect(registered.token_ttl).toBeNull()
  })

  it("signs the member in: PKCE and `openid profile email` on medpanel's authorize URL, then a session cookie whose /session has the member's name and e-mail", async () => {
    const {browser, authorize} = await signedIn()

    // What Auth.js asked for by default: the code flow, PKCE S256, the three scopes, no state or nonce.
    expect(Object.fromEntries(authorize.searchParams)).toEqual({
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: `${origin}/auth/callback/medpanel`,
      scope: 'openid profile email',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: 'S256',
    })

    // Its session: a cookie (an encrypted JWT), and /session reading it.
    expect(browser.cookie('authjs.session-token')).toEqual(expect.any(String))
    const session = await browser.request(`${origin}/auth/session`)
    expect(session.status).toBe(200)
    expect(await session.json()).toEqual({
      user: {name: `${MEMBER.first_name} ${MEMBER.last_name}`, email: MEMBER.email},
      expires: expect.any(String),
    })
    // A browser without the cookie has no session.
    expect(await (await fetch(`${origin}/auth/session`)).json()).toBeNull()

    // The profile is the ID token's claims (Auth.js's default for an OIDC provider, checked by
    // oauth4webapi), and the account is the member's subject at medpanel.
    expect(signIns).toHaveLength(1)
    const {account, profile} = signIns[0]!
    expect(profile).toMatchObject({...memberClaims(provider.sub), iss: provider.server.url, aud: registered.client_id})
    expect(profile).not.toHaveProperty('nonce')
    expect(account).toMatchObject({provider: 'medpanel', type: 'oidc', providerAccountId: provider.sub, token_type: 'bearer', scope: 'openid profile email'})
    expect(errors).toEqual([])
  })

  it('the token answer of the OpenID request has no expires_in for a token that never expires, so Auth.js keeps no expiry for the account', async () => {
    await signedIn()

    // Discovery on the way out and on the way back, the token request, and nothing else (UserInfo
    // is not asked by default: the ID token is the profile).
    expect(fetched).toEqual([
      `${provider.server.url}/.well-known/openid-configuration`,
      `${provider.server.url}/.well-known/openid-configuration`,
      `${provider.server.url}/oauth/token`,
    ])
    expect(tokenAnswers).toHaveLength(1)
    const answer = tokenAnswers[0]!
    expect(answer).toMatchObject({access_token: expect.any(String), token_type: 'bearer', scope: 'openid profile email', id_token: expect.any(String)})
    expect(answer).not.toHaveProperty('expires_in')
    expect(signIns[0]!.account).not.toHaveProperty('expires_at')
    // The token is live, and stays so: medpanel says it has no expiry.
    const info = await fetch(`${provider.server.url}/oauth/token/info`, {headers: {authorization: `Bearer ${answer.access_token}`}})
    expect(info.status).toBe(200)
    expect(await info.json()).toMatchObject({expires_in_seconds: null})
    expect(errors).toEqual([])
  })
})
