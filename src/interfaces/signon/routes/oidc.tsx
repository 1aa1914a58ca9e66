import {registrationEnabled} from '../../../registry/dynamic-registration.js'
import {narrow} from '../../../store/database.js'
import {createRoute, type OpenAPIHono, type z} from '@hono/zod-openapi'
import type {Context} from 'hono'
import {DEMO_CLIENT_ID} from '../../../demo-data.js'
import {bearerTokenGuard} from '../../../http/bearer-auth.js'
import {useErrorShape} from '../../../http/error-shape.js'
import {formTarget, pagePolicy} from '../../../http/page-headers.js'
import {renderOAuthError} from '../../../http/oauth-error.js'
import {presentToken} from '../../../grants/service.js'
import {authorizationServerMetadata} from '../discovery.js'
import {ConfirmSignOutPage, SignedOutPage} from '../logout-pages.js'
import {userInfo} from '../oidc.js'
import {endSessionParams, jsonWebKeySet, oauthError, serverMetadata, userInfoResponse} from '../schema.js'
import {checkLogoutRequest} from '../logout.js'
import {closeSession} from '../sessions.js'
import {endSession, readSession} from '../session-cookie.js'
import {publishedKeys} from '../signing-keys.js'
import type {SignonContext} from './context.js'
import {corsClient} from './cors.js'
import {jsonResponse, responseHeader} from '../../../http/fast.js'

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration'
export const USERINFO_PATH = '/oauth/userinfo'
export const END_SESSION_PATH = '/oauth/end_session'
export const JWKS_PATH = '/oauth/jwks'

/** The OpenID Connect routes and the methods each serves. */
export const OIDC_METHODS: Record<string, string[]> = {
  [OPENID_CONFIGURATION_PATH]: ['GET'],
  [JWKS_PATH]: ['GET'],
  [USERINFO_PATH]: ['GET', 'POST'],
  [END_SESSION_PATH]: ['GET', 'POST'],
}
/** Answered in OAuth's JSON shape; the logout endpoint is a browser page. */
export const OIDC_JSON_PATHS = [OPENID_CONFIGURATION_PATH, JWKS_PATH, USERINFO_PATH]

const configurationRoute = createRoute({
  method: 'get',
  operationId: 'openidConfiguration',
  path: OPENID_CONFIGURATION_PATH,
  summary: 'OpenID Provider configuration (OpenID Connect Discovery): the same document as the RFC 8414 metadata',
  tags: ['A. Sign-on'],
  security: [],
  responses: {200: {description: 'The configuration document', content: {'application/json': {schema: serverMetadata}}}},
})

const jwksRoute = createRoute({
  method: 'get',
  operationId: 'jwks',
  path: JWKS_PATH,
  summary: 'The public keys ID tokens are signed with (jwks_uri)',
  tags: ['A. Sign-on'],
  security: [],
  responses: {200: {description: 'The key set', content: {'application/json': {schema: jsonWebKeySet}}}},
})

const USERINFO_SECURITY: Record<string, string[]>[] = [{bearer: []}, {oauth2: ['openid']}]
const userInfoRoute = (method: 'get' | 'post') =>
  createRoute({
    method,
    operationId: method === 'get' ? 'userInfo' : 'userInfoPost',
    path: USERINFO_PATH,
    summary: 'OpenID Connect UserInfo: the claims of the member the token acts for',
    tags: ['A. Sign-on'],
    security: USERINFO_SECURITY,
    responses: {
      200: {description: 'The claims', content: {'application/json': {schema: userInfoResponse}}},
      401: {description: 'invalid_request or invalid_token (RFC 6750), with WWW-Authenticate', content: {'application/json': {schema: oauthError}}},
      403: {description: 'insufficient_scope: the token was not issued with openid', content: {'application/json': {schema: oauthError}}},
    },
  })

const endSessionResponses = {
  200: {description: 'HTML page: a confirmation form, or "you are signed out"'},
  303: {description: 'Signed out; to the post_logout_redirect_uri, with state'},
  400: {description: 'HTML error page: an ID token hint this service did not issue, or a post_logout_redirect_uri the client did not register'},
}
const endSessionGet = createRoute({
  method: 'get',
  operationId: 'endSession',
  path: END_SESSION_PATH,
  summary: "RP-initiated logout: ends the member's sign-in on this browser, then goes back to the client",
  tags: ['A. Sign-on'],
  security: [],
  request: {query: endSessionParams},
  responses: endSessionResponses,
})
const endSessionPost = createRoute({
  method: 'post',
  operationId: 'endSessionPost',
  path: END_SESSION_PATH,
  summary: 'RP-initiated logout with the parameters in a form body; also the confirmation form',
  tags: ['A. Sign-on'],
  security: [],
  request: {body: {content: {'application/x-www-form-urlencoded': {schema: endSessionParams, example: {client_id: DEMO_CLIENT_ID, state: 'af0ifjsldkj'}}}}},
  responses: endSessionResponses,
})

/** OpenID Connect's own endpoints: discovery, the key set, UserInfo and RP-initiated logout. */
export function oidcRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  const {db, clock} = ctx.deps

  app.openapi(configurationRoute, async (c) =>
    jsonResponse(c, authorizationServerMetadata(ctx.issuerOf(c), {registration: await registrationEnabled(narrow(ctx.deps.reader), ctx.deps.clock.now())}), 200, {
      'Cache-Control': 'public, max-age=3600',
    }),
  )

  // Cached five minutes at most: a rotated-in key is published ten minutes before it signs.
  app.openapi(jwksRoute, async (c) => jsonResponse(c, (await publishedKeys(ctx.deps, clock.now())) as z.infer<typeof jsonWebKeySet>, 200, {'Cache-Control': 'public, max-age=300'}))

  const oauthShape = useErrorShape(renderOAuthError)
  const bearer = bearerTokenGuard({verify: (token) => presentToken(ctx.deps, token, clock.now()), origin: ctx.issuerOf, answerAs: 'invalid_token', formBody: true})
  for (const method of ['get', 'post'] as const) {
    app.openapi(userInfoRoute(method), async (c) => {
      oauthShape(c)
      const token = await bearer(c)
      corsClient(c, token.clientId)
      return jsonResponse(c, userInfo(token), 200, {'Cache-Control': 'no-store'})
    })
  }

  app.openapi(endSessionGet, (c) => endSessionFlow(c, c.req.valid('query')))
  app.openapi(endSessionPost, (c) => endSessionFlow(c, c.req.valid('form')))

  /**
   * RP-initiated logout 1.0. The browser's session ends at once when an id_token_hint proves the
   * request comes from an application of the signed-in member; otherwise the member is asked
   * first (a link on any site must not sign members out). The redirect goes only to a URI the
   * client the hint (or client_id) names registered: a post-logout URI, or by default one of its
   * redirect URIs or their origins' roots (logout.ts, postLogoutAllowed).
   */
  async function endSessionFlow(c: Context, params: z.infer<typeof endSessionParams>) {
    const now = clock.now()
    const {client, subject, destination} = await checkLogoutRequest(ctx.deps.reader, params, ctx.issuerOf(c), now)
    responseHeader(c, 'Cache-Control', 'no-store')
    const signed = await ctx.signedIn(c)
    if (signed) {
      const proven = subject !== undefined && subject === String(signed.member.id)
      if (params.confirm === 'yes') await ctx.requireFormToken(c, params.csrf_token)
      else if (!proven) {
        // The confirming form's answer redirects to the client: the page's policy must let it.
        if (destination) responseHeader(c, 'Content-Security-Policy', pagePolicy([formTarget(destination)]))
        const {csrf_token: _csrf, confirm: _confirm, ...carried} = params
        return c.html(<ConfirmSignOutPage memberName={signed.member.first_name} clientName={client?.name} params={carried} csrf={await ctx.formToken(c)} />)
      }
      await closeSession(db, await readSession(c, await ctx.cookieSecret()), now)
      endSession(c)
    }
    if (destination) return c.redirect(destination, 303)
    return c.html(<SignedOutPage />)
  }
}
