import {OpenAPIHono, createRoute, type z} from '@hono/zod-openapi'
import type {Context} from 'hono'
import {auth as parseBasicAuth} from 'hono/utils/basic-auth'
import {bodyLimit} from 'hono/body-limit'
import type {AppDeps} from '../../deps.js'
import {AppError} from '../../errors.js'
import {bearerTokenGuard} from '../../http/bearer-auth.js'
import {methodNotAllowed} from '../../http/method-not-allowed.js'
import {originCheck} from '../../http/origin-check.js'
import {serviceOrigin} from '../../http/allowed-hosts.js'
import {presentToken} from '../../grants/service.js'
import {pagePolicy} from '../../http/page-headers.js'
import {errorShape, useErrorShape, type ErrorRenderer} from '../../http/error-shape.js'
import {guardChain} from '../../http/guards.js'
import {jsonResponse} from '../../http/fast.js'
import {clientAddress} from '../../http/client-address.js'
import {renderOAuthError} from '../../http/oauth-error.js'
import {rejectInvalid} from '../../http/validation.js'
import {keyringOf} from '../../store/db.js'
import {derivedKey} from '../../store/secrets.js'
import {ApplicationsPage, ConsentPage, DemoCallbackPage, ErrorPage, SignInPage} from './pages.js'
import {
  applicationForm,
  authorizeQuery,
  consentForm,
  introspectForm,
  introspectionResponse,
  memberInfoResponse,
  oauthError,
  revokeForm,
  serverMetadata,
  signInForm,
  tokenForm,
  tokenInfoResponse,
  tokenResponse,
} from './schema.js'
import * as signon from './service.js'
import {DEMO_BASE_URL, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_MEMBER} from '../../demo-data.js'
import {revokeConsent} from '../../registry/service.js'
import {authorizationServerMetadata, withIssuer} from './discovery.js'
import {checkCsrf, csrfToken, endSession, readSession, startSession} from './session.js'
import {config} from '../../config.js'

/**
 * Browser-facing errors: redirect back to the client when that is safe (naming the issuer, RFC
 * 9207), else an HTML page.
 */
const pageRenderer =
  (issuerOf: (c: Context) => string): ErrorRenderer =>
  (c, error) => {
    if (error.location) return c.redirect(withIssuer(error.location, issuerOf(c)), 302)
    const title = error.status >= 500 ? 'Something went wrong' : 'This sign-in request cannot continue'
    c.header('Cache-Control', 'no-store')
    return c.html(<ErrorPage title={title} message={error.message} />, error.status as 400)
  }

const NO_STORE = {'Cache-Control': 'no-store', Pragma: 'no-cache'}
/** Token and member info: RFC 6750 asks no Pragma of resource answers, and these are polled hard. */
const INFO_NO_STORE = {'cache-control': 'no-store'}

/** The demo's client on the demo's default address: the examples work against `serve --demo`. */
const AUTHORIZE_EXAMPLE = {
  client_id: DEMO_CLIENT_ID,
  redirect_uri: `${DEMO_BASE_URL}/demo/callback`,
  response_type: 'code',
  state: 'af0ifjsldkj',
  scope: 'profile',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCQaoeEKmfhB4jv_1ZdOrPV8',
  code_challenge_method: 'S256',
}

const authorizePage = createRoute({
  method: 'get',
  operationId: 'authorizePage',
  path: '/oauth/authorize',
  summary: 'Start sign-on: shows the sign-in form, then the consent page',
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  request: {query: authorizeQuery},
  responses: {
    200: {description: 'HTML sign-in or consent page'},
    302: {description: 'Redirect to the client with error (after client and redirect URI are verified)'},
    400: {description: 'HTML error page: unknown client, unregistered redirect URI, malformed request'},
  },
})

const decide = createRoute({
  method: 'post',
  operationId: 'decideConsent',
  path: '/oauth/authorize',
  summary: 'The member allows or denies; redirects to the client with code or error',
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  request: {body: {content: {'application/x-www-form-urlencoded': {schema: consentForm, example: {...AUTHORIZE_EXAMPLE, csrf_token: 'FROM_THE_PAGE', decision: 'allow'}}}}},
  responses: {
    302: {description: 'Redirect to the redirect URI with code and state, or error=access_denied'},
    400: {description: 'HTML error page'},
    403: {description: 'HTML error page: the form expired (CSRF check failed)'},
  },
})

const createSession = createRoute({
  method: 'post',
  operationId: 'signIn',
  path: '/oauth/session',
  summary: "Member sign-in with e-mail and password (the consent page's first form)",
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  request: {
    body: {
      content: {
        'application/x-www-form-urlencoded': {
          schema: signInForm,
          example: {...AUTHORIZE_EXAMPLE, csrf_token: 'FROM_THE_PAGE', email: DEMO_MEMBER.email, password: DEMO_MEMBER.password},
        },
      },
    },
  },
  responses: {
    303: {description: 'Signed in; back to the consent page'},
    401: {description: 'HTML sign-in page with an error'},
  },
})

const APPLICATIONS_PATH = '/oauth/authorized_applications'

const applicationsPage = createRoute({
  method: 'get',
  operationId: 'authorizedApplicationsPage',
  path: APPLICATIONS_PATH,
  summary: 'The applications a member allowed, each with a Revoke button (sign in first)',
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  responses: {200: {description: 'HTML page: the list, or the sign-in form when not signed in'}},
})

const revokeApplication = createRoute({
  method: 'post',
  operationId: 'revokeApplication',
  path: `${APPLICATIONS_PATH}/revoke`,
  summary: "Take an application's access back: its tokens and pending codes end at once",
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  request: {body: {content: {'application/x-www-form-urlencoded': {schema: applicationForm, example: {csrf_token: 'FROM_THE_PAGE', client_id: DEMO_CLIENT_ID}}}}},
  responses: {303: {description: 'Back to the list'}, 400: {description: 'HTML error page'}, 403: {description: 'HTML error page: expired form or foreign origin'}},
})

const signOut = createRoute({
  method: 'post',
  operationId: 'signOut',
  path: '/oauth/sign_out',
  summary: "End the member's sign-in session on this browser",
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  request: {body: {content: {'application/x-www-form-urlencoded': {schema: applicationForm, example: {csrf_token: 'FROM_THE_PAGE'}}}}},
  responses: {303: {description: 'Back to the (now signed-out) applications page'}, 403: {description: 'HTML error page: expired form or foreign origin'}},
})

const clientAuth: Record<string, string[]>[] = [{clientSecretBasic: []}, {clientSecretPost: []}]

const metadataRoute = createRoute({
  method: 'get',
  operationId: 'authorizationServerMetadata',
  path: '/.well-known/oauth-authorization-server',
  summary: 'Authorization server metadata (RFC 8414): endpoints, grant types, PKCE, authentication methods',
  tags: ['A. Sign-on'],
  // A browser page or form: the member signs in on it; no API credentials.
  security: [],
  responses: {200: {description: 'The metadata document', content: {'application/json': {schema: serverMetadata}}}},
})

const revokeRoute = createRoute({
  method: 'post',
  operationId: 'revokeToken',
  path: '/oauth/revoke',
  summary: "Revoke one of the calling client's access tokens (RFC 7009)",
  tags: ['A. Sign-on'],
  security: clientAuth,
  request: {
    body: {
      content: {
        'application/x-www-form-urlencoded': {
          schema: revokeForm,
          example: {token: 'AN_ACCESS_TOKEN', token_type_hint: 'access_token', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET},
        },
      },
    },
  },
  responses: {
    200: {description: "Done, or nothing to do: the answer is the same for an unknown token or another client's"},
    400: {description: 'invalid_request, unsupported_token_type', content: {'application/json': {schema: oauthError}}},
    401: {description: 'invalid_client', content: {'application/json': {schema: oauthError}}},
  },
})

const introspectRoute = createRoute({
  method: 'post',
  operationId: 'introspectToken',
  path: '/oauth/introspect',
  summary: 'Describe an access token of the calling client (RFC 7662)',
  tags: ['A. Sign-on'],
  security: clientAuth,
  request: {
    body: {
      content: {'application/x-www-form-urlencoded': {schema: introspectForm, example: {token: 'AN_ACCESS_TOKEN', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET}}},
    },
  },
  responses: {
    200: {description: "The token's state", content: {'application/json': {schema: introspectionResponse}}},
    400: {description: 'invalid_request', content: {'application/json': {schema: oauthError}}},
    401: {description: 'invalid_client', content: {'application/json': {schema: oauthError}}},
  },
})

const token = createRoute({
  method: 'post',
  operationId: 'token',
  path: '/oauth/token',
  summary: 'Exchange an authorization code (or client credentials) for an access token',
  tags: ['A. Sign-on'],
  security: clientAuth,
  request: {
    body: {
      content: {
        'application/x-www-form-urlencoded': {
          schema: tokenForm,
          example: {grant_type: 'client_credentials', scope: 'pulses', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET},
        },
      },
    },
  },
  responses: {
    200: {description: 'Access token', content: {'application/json': {schema: tokenResponse}}},
    400: {description: 'invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope', content: {'application/json': {schema: oauthError}}},
    401: {description: 'invalid_client', content: {'application/json': {schema: oauthError}}},
  },
})

/** Token info takes any live token; member info a member's token with the profile scope. */
const TOKEN_SECURITY: Record<string, string[]>[] = [{bearer: []}]
const MEMBER_SECURITY: Record<string, string[]>[] = [{bearer: []}, {oauth2: ['profile']}]

const infoRoute = (path: string, kind: 'token' | 'member') =>
  createRoute({
    method: 'get',
    path,
    operationId: `${kind === 'token' ? 'tokenInfo' : 'memberInfo'}${path.startsWith('/user') ? '' : 'Short'}`,
    summary: kind === 'token' ? 'Check an access token (member still active and consenting)' : 'Member information',
    tags: ['A. Sign-on'],
    security: kind === 'member' ? MEMBER_SECURITY : TOKEN_SECURITY,
    responses: {
      200: {
        description: kind === 'token' ? 'Token info' : 'Member information',
        content: {'application/json': {schema: kind === 'token' ? tokenInfoResponse : memberInfoResponse}},
      },
      401: {
        description: kind === 'token' ? 'invalid_request: unknown, expired or revoked token, or inactive member' : 'invalid_token',
        content: {'application/json': {schema: oauthError}},
      },
    },
  })

function formParams(form: Record<string, string | undefined>): Record<string, string | undefined> {
  const {client_id, redirect_uri, response_type, state, scope, code_challenge, code_challenge_method} = form
  return {client_id, redirect_uri, response_type, state, scope, code_challenge, code_challenge_method}
}

function authorizeRequest(form: Record<string, string | undefined>): signon.AuthorizeRequest {
  return {...formParams(form), client_id: form.client_id ?? '', redirect_uri: form.redirect_uri ?? ''}
}

/** Client authentication at the token endpoint: HTTP Basic or form fields, not both (RFC 6749 §2.3.1). */
function clientCredentials(c: Context, form: {client_id?: string | undefined; client_secret?: string | undefined}): signon.ClientCredentials {
  const header = c.req.header('authorization')
  if (header !== undefined) {
    const basic = parseBasicAuth(c.req.raw)
    if (!basic) throw new AppError('invalid_client', 'the Authorization header is not valid HTTP Basic', {headers: {'WWW-Authenticate': 'Basic realm="medpanel"'}})
    if (form.client_secret !== undefined) throw new AppError('invalid_request', 'send client credentials in the Authorization header or the body, not both')
    const decode = (v: string) => {
      try {
        return decodeURIComponent(v.replace(/\+/g, ' '))
      } catch {
        return v
      }
    }
    const clientId = decode(basic.username)
    if (form.client_id !== undefined && form.client_id !== clientId) throw new AppError('invalid_request', 'client_id in the body differs from the Authorization header')
    return {clientId, clientSecret: decode(basic.password), address: clientAddress(c)}
  }
  if (!form.client_id) throw new AppError('invalid_client', 'client authentication is required: client_id and client_secret')
  if (form.client_secret === undefined) throw new AppError('invalid_client', 'client_secret is required')
  return {clientId: form.client_id, clientSecret: form.client_secret, address: clientAddress(c)}
}

export function signonRoutes(deps: AppDeps): OpenAPIHono {
  const {db, clock} = deps
  const app = new OpenAPIHono({defaultHook: rejectInvalid})
  let secretPromise: Promise<string> | undefined
  // Derived from the store's key, which lives outside the database: reading the database file is
  // not enough to forge a sign-in cookie. Rotating the key ends every sign-in session.
  const cookieSecret = () => (secretPromise ??= Promise.resolve(derivedKey(keyringOf(db), 'sign-in cookies').toString('base64url')))
  const publicHttps = deps.baseUrl?.startsWith('https:') ?? false
  /** The issuer: fixed when the service starts (src/http/allowed-hosts.ts), never the request's Host. */
  const issuerOf = (c: Context) => serviceOrigin(deps.baseUrl, c)
  const renderPage = pageRenderer(issuerOf)
  const formOrigin = originCheck((c) => [...new Set([issuerOf(c), new URL(c.req.url).origin])])

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {type: 'http', scheme: 'bearer'})

  for (const path of ['/oauth/authorize', '/oauth/session', APPLICATIONS_PATH, `${APPLICATIONS_PATH}/revoke`, '/oauth/sign_out']) {
    app.use(
      path,
      errorShape(renderPage),
      bodyLimit({
        maxSize: config.http.requestBodyLimitBytes,
        onError: () => {
          throw new AppError('payload_too_large', 'the form is too large')
        },
      }),
    )
    // Forms only ever POST; a cross-site POST is refused before it reaches a handler.
    if (path !== APPLICATIONS_PATH) app.on('POST', path, formOrigin)
  }
  for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
    app.use(
      path,
      errorShape(renderOAuthError),
      bodyLimit({
        maxSize: config.http.requestBodyLimitBytes,
        onError: () => {
          throw new AppError('payload_too_large', 'the request body is too large')
        },
      }),
    )
  }
  app.openAPIRegistry.registerComponent('securitySchemes', 'clientSecretBasic', {type: 'http', scheme: 'basic', description: 'client_id:client_secret (RFC 6749 §2.3.1)'})
  app.openAPIRegistry.registerComponent('securitySchemes', 'clientSecretPost', {
    type: 'apiKey',
    in: 'query',
    name: 'client_secret',
    description: 'client_id and client_secret as form fields of the body',
  })
  app.openAPIRegistry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    flows: {
      authorizationCode: {authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token', scopes: {profile: "the member's name, country of practice and specialty"}},
      clientCredentials: {tokenUrl: '/oauth/token', scopes: {pulses: "the client's own pulse exports (interface D)"}},
    },
  })

  app.openapi(metadataRoute, (c) => c.json(authorizationServerMetadata(issuerOf(c)), 200, {'Cache-Control': 'public, max-age=3600'}))

  // A failed client authentication in the Authorization header names the scheme it failed (RFC 6749 §5.2).
  const basicChallenge = (c: Context, error: unknown) =>
    error instanceof AppError && error.code === 'invalid_client' && c.req.header('authorization') !== undefined && !error.headers['WWW-Authenticate']
      ? new AppError('invalid_client', error.message, {headers: {'WWW-Authenticate': 'Basic realm="medpanel"'}})
      : error

  app.openapi(revokeRoute, async (c) => {
    const form = c.req.valid('form')
    try {
      await signon.revoke(db, clientCredentials(c, form), form.token, form.token_type_hint, clock.now())
    } catch (error) {
      throw basicChallenge(c, error)
    }
    return c.body(null, 200, NO_STORE)
  })

  app.openapi(introspectRoute, async (c) => {
    const form = c.req.valid('form')
    try {
      return c.json(await signon.introspect(db, clientCredentials(c, form), form.token, clock.now()), 200, NO_STORE)
    } catch (error) {
      throw basicChallenge(c, error)
    }
  })
  app.on('POST', '/oauth/token', async (c, next) => {
    if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header('content-type') ?? '')) {
      throw new AppError('invalid_request', 'the body must be application/x-www-form-urlencoded')
    }
    await next()
  })

  const sessionMember = async (c: Context) => {
    const sessionId = await readSession(c, await cookieSecret())
    return sessionId ? signon.sessionMember(db, sessionId, clock.now()) : undefined
  }

  app.openapi(authorizePage, async (c) => {
    const query = c.req.valid('query')
    const checked = await signon.checkAuthorizeRequest(db, authorizeRequest(query))
    const csrf = await csrfToken(c, await cookieSecret(), publicHttps)
    const member = await sessionMember(c)
    const params = formParams(query)
    c.header('Cache-Control', 'no-store')
    c.header('X-Frame-Options', 'DENY')
    if (!member) return c.html(<SignInPage client={checked.client} params={params} csrf={csrf} />)
    // Allow and Deny answer with a redirect to the client: the page's policy must let the form lead there.
    c.header('Content-Security-Policy', pagePolicy([new URL(checked.redirectUri).origin]))
    return c.html(<ConsentPage client={checked.client} memberName={member.first_name} scopes={checked.scopes} params={params} csrf={csrf} />)
  })

  app.openapi(createSession, async (c) => {
    const form = c.req.valid('form')
    const secret = await cookieSecret()
    if (!(await checkCsrf(c, secret, form.csrf_token))) throw new AppError('forbidden', 'This form has expired. Go back to the application and start again.')
    // Signing in to manage one's applications needs no authorize request; anything else does.
    const toApplications = form.return_to === APPLICATIONS_PATH
    const checked = toApplications ? undefined : await signon.checkAuthorizeRequest(db, authorizeRequest(form))
    const params = toApplications ? {return_to: APPLICATIONS_PATH} : formParams(form)
    try {
      const member = await signon.signIn(db, form.email ?? '', form.password ?? '', {clock, address: clientAddress(c)})
      // A new session id at every sign-in; the one this browser had before, if any, ends.
      const sessionId = await signon.openSession(db, member.id, await readSession(c, secret), clock.now())
      await startSession(c, secret, sessionId, publicHttps)
    } catch (error) {
      // Wrong password, inactive member, or too many attempts: all shown on the sign-in page.
      if (!(error instanceof AppError) || (error.code !== 'access_denied' && error.code !== 'too_many_requests')) throw error
      const csrf = await csrfToken(c, secret, publicHttps)
      return c.html(<SignInPage client={checked?.client} params={params} csrf={csrf} error={error.message} />, error.status as 401, error.headers)
    }
    if (toApplications) return c.redirect(APPLICATIONS_PATH, 303)
    const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined))
    return c.redirect(`/oauth/authorize?${query}`, 303)
  })

  const showApplications = async (c: Context, notice?: string) => {
    const secret = await cookieSecret()
    const csrf = await csrfToken(c, secret, publicHttps)
    c.header('Cache-Control', 'no-store')
    const member = await sessionMember(c)
    if (!member) return c.html(<SignInPage params={{return_to: APPLICATIONS_PATH}} csrf={csrf} />)
    const applications = await signon.authorizedApplications(db, member.id, clock.now())
    return c.html(<ApplicationsPage memberName={`${member.first_name} ${member.last_name}`} applications={applications} csrf={csrf} notice={notice} />)
  }

  app.openapi(applicationsPage, (c) => showApplications(c))

  app.openapi(revokeApplication, async (c) => {
    const form = c.req.valid('form')
    const secret = await cookieSecret()
    if (!(await checkCsrf(c, secret, form.csrf_token))) throw new AppError('forbidden', 'This form has expired. Open the page again and retry.')
    const member = await sessionMember(c)
    if (!member) return c.redirect(APPLICATIONS_PATH, 303)
    // Only an application this member allowed can be taken back from here.
    const allowed = await signon.authorizedApplications(db, member.id, clock.now())
    const app = allowed.find((a) => a.client_id === form.client_id)
    if (!app) throw new AppError('bad_request', 'That application has no access to take back.')
    await revokeConsent(db, member.id, app.client_id, clock.now())
    return c.redirect(APPLICATIONS_PATH, 303)
  })

  app.openapi(signOut, async (c) => {
    const form = c.req.valid('form')
    const secret = await cookieSecret()
    if (!(await checkCsrf(c, secret, form.csrf_token))) throw new AppError('forbidden', 'This form has expired. Open the page again and retry.')
    // Ended on the server first: a copy of the cookie kept anywhere no longer opens anything.
    await signon.closeSession(db, await readSession(c, secret), clock.now())
    endSession(c)
    return c.redirect(APPLICATIONS_PATH, 303)
  })

  app.openapi(decide, async (c) => {
    const form = c.req.valid('form')
    const secret = await cookieSecret()
    if (!(await checkCsrf(c, secret, form.csrf_token))) throw new AppError('forbidden', 'This form has expired. Go back to the application and start again.')
    const checked = await signon.checkAuthorizeRequest(db, authorizeRequest(form))
    const member = await sessionMember(c)
    if (!member) {
      return c.html(<SignInPage client={checked.client} params={formParams(form)} csrf={await csrfToken(c, secret, publicHttps)} error="Please sign in again." />, 401)
    }
    if (form.decision === 'allow') return c.redirect(withIssuer(await signon.allow(db, checked, member.id, clock.now()), issuerOf(c)), 302)
    if (form.decision === 'deny') return c.redirect(withIssuer(signon.deny(checked), issuerOf(c)), 302)
    throw new AppError('invalid_request', 'decision must be allow or deny')
  })

  app.openapi(token, async (c) => {
    const form = c.req.valid('form')
    const now = clock.now()
    try {
      return c.json(await grant(c, form, now), 200, NO_STORE)
    } catch (error) {
      throw basicChallenge(c, error)
    }
  })

  const grant = async (c: Context, form: z.infer<typeof tokenForm>, now: Date): Promise<signon.TokenResponse> => {
    let issued: signon.TokenResponse
    switch (form.grant_type) {
      case undefined:
      case '':
        throw new AppError('invalid_request', 'grant_type is required')
      case 'authorization_code': {
        if (!form.code) throw new AppError('invalid_request', 'code is required')
        if (!form.redirect_uri) throw new AppError('invalid_request', 'redirect_uri is required')
        issued = await signon.exchangeCode(db, clientCredentials(c, form), {code: form.code, redirectUri: form.redirect_uri, codeVerifier: form.code_verifier}, now)
        break
      }
      case 'client_credentials':
        issued = await signon.exchangeClientCredentials(db, clientCredentials(c, form), form.scope, now)
        break
      default:
        throw new AppError('unsupported_grant_type', `grant_type ${JSON.stringify(form.grant_type.slice(0, 64))} is not supported`)
    }
    return issued
  }

  const tokenDead = (reason: string, challenge: string) => new AppError('invalid_request', reason, {status: 401, headers: {'WWW-Authenticate': challenge}})
  const memberDead = (reason: string, challenge: string) => new AppError('invalid_token', reason, {headers: {'WWW-Authenticate': challenge}})

  // Token info is the hottest route (partners are told to poll it), so its checks run inside the
  // handler: each middleware layer would cost a share of its throughput.
  const verify = (token: string) => presentToken(db, token, clock.now())
  const tokenGuard = guardChain(useErrorShape(renderOAuthError), bearerTokenGuard({verify, reject: tokenDead}))
  const memberGuard = guardChain(useErrorShape(renderOAuthError), bearerTokenGuard({verify, reject: memberDead}))
  for (const path of ['/user/oauth/token/info', '/oauth/token/info']) {
    app.openapi(infoRoute(path, 'token'), async (c) => {
      await tokenGuard(c)
      return jsonResponse(c, signon.tokenInfo(c.get('token')), 200, INFO_NO_STORE)
    })
  }
  for (const path of ['/user/oauth/user/info', '/oauth/user/info']) {
    app.openapi(infoRoute(path, 'member'), async (c) => {
      await memberGuard(c)
      return jsonResponse(c, signon.memberInfo(c.get('token')), 200, INFO_NO_STORE)
    })
  }
  // Other methods on these paths, and anything else under /user/oauth, answer in OAuth's shape.
  app.use('/user/oauth/*', errorShape(renderOAuthError))
  app.use('/oauth/token/info', errorShape(renderOAuthError))
  app.use('/oauth/user/info', errorShape(renderOAuthError))

  const allowed: Record<string, string[]> = {
    '/oauth/authorize': ['GET', 'POST'],
    '/oauth/session': ['POST'],
    '/oauth/token': ['POST'],
    '/user/oauth/token/info': ['GET'],
    '/oauth/token/info': ['GET'],
    '/user/oauth/user/info': ['GET'],
    '/oauth/user/info': ['GET'],
  }
  for (const [path, methods] of Object.entries(allowed)) app.all(path, methodNotAllowed(...methods))

  if (deps.demo) {
    app.get('/demo/callback', async (c) => {
      const query = c.req.query()
      const base = serviceOrigin(deps.baseUrl, c)
      // The code is echoed into a shell line to paste: only a code this service issued, and with
      // the client it was issued to. Only the demo client's secret is published; any other
      // client's stays a placeholder.
      const code = query.code && /^[A-Za-z0-9_-]{1,256}$/.test(query.code) ? await signon.findCodeClient(db, query.code) : undefined
      const secret = code?.clientId === DEMO_CLIENT_ID ? DEMO_CLIENT_SECRET : 'YOUR_CLIENT_SECRET'
      const curl = code
        ? `curl -s -X POST ${base}/oauth/token -d grant_type=authorization_code -d client_id=${code.clientId} -d client_secret=${secret} --data-urlencode redirect_uri=${code.redirectUri} -d code=${query.code}`
        : null
      return c.html(<DemoCallbackPage query={query} curl={curl} />)
    })
  }
  return app
}
