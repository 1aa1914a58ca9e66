import {OpenAPIHono} from '@hono/zod-openapi'
import type {Context} from 'hono'
import {bodyLimit} from 'hono/body-limit'
import {cors} from 'hono/cors'
import {config} from '../../../config.js'
import type {RouteDeps, ServedInterface} from '../../../deps.js'
import {AppError} from '../../../errors.js'
import {errorShape} from '../../../http/error-shape.js'
import {urlEncodedForm} from '../../../http/fast.js'
import {formCached} from '../../../http/hono-node.js'
import {methodNotAllowed} from '../../../http/method-not-allowed.js'
import {renderOAuthError} from '../../../http/oauth-error.js'
import {originCheck} from '../../../http/origin-check.js'
import {schemaHook} from '../../../http/validation.js'
import {type SignonSettings, signonContext} from './context.js'
import {demoRoutes} from './demo.js'
import {INFO_METHODS, infoRoutes, tokenInfoFront} from './info.js'
import {clientCors} from './cors.js'
import {END_SESSION_PATH, JWKS_PATH, OIDC_JSON_PATHS, OIDC_METHODS, OPENID_CONFIGURATION_PATH, oidcRoutes, USERINFO_PATH} from './oidc.js'
import {APPLICATIONS_PATH, AUTHORIZE_PATH, isAuthorizeRequestPost, PAGE_METHODS, pageRenderer, pageRoutes} from './pages.js'
import {METADATA_PATH, REVOKE_PATH, TOKEN_METHODS, TOKEN_PATH, tokenRoutes} from './token.js'
import {REGISTRATION_METHODS, registrationRoutes} from './registration.js'
import {requestHeader} from '../../../http/fast.js'

/**
 * Interface A, by flow: the browser's pages and forms (pages.tsx), the endpoints clients call
 * with their credentials (token.ts), the resources they call with a token (info.ts), OpenID
 * Connect's own endpoints (oidc.tsx), and the demo's callback page (demo.tsx). Each path answers errors in its audience's shape: an HTML page
 * or a redirect for browsers, OAuth's JSON for clients. Any method a path does not serve gets 405
 * with Allow, in the same shape.
 */
/** Sign-on's paths that answer with HTML pages, which the app gives the page headers (http/page-headers.ts). */
export const SIGNON_PAGE_PATHS = [
  '/oauth/authorize',
  '/oauth/session',
  '/oauth/authorized_applications',
  '/oauth/authorized_applications/*',
  '/oauth/sign_out',
  '/oauth/end_session',
  '/demo/*',
] as const

/** Interface A as the app serves it (its demo callback page included). */
export const signonInterface: ServedInterface<SignonSettings> = {
  label: 'A',
  title: 'sign-on (A, OAuth 2 and OpenID Connect)',
  prefixes: ['/oauth', '/user/oauth', '/.well-known', '/demo'],
  pagePaths: SIGNON_PAGE_PATHS,
  routes: (deps) => signonRoutes(deps),
  front: (deps) => [tokenInfoFront(deps)],
}

export function signonRoutes(deps: RouteDeps<SignonSettings>): OpenAPIHono {
  const app = new OpenAPIHono({defaultHook: schemaHook()})
  const ctx = signonContext(deps)
  const bodyCap = (what: string) =>
    bodyLimit({
      maxSize: config.http.requestBodyLimitBytes,
      onError: () => {
        throw new AppError('payload_too_large', `the ${what} is too large`)
      },
    })

  const renderPage = pageRenderer(ctx.issuerOf)
  const formOrigin = originCheck((c) => [...new Set([ctx.issuerOf(c), new URL(c.req.url).origin])])
  for (const path of Object.keys(PAGE_METHODS)) {
    app.use(path, errorShape(renderPage), bodyCap('form'))
    // Forms only ever POST; a cross-site POST is refused before it reaches a handler. The one
    // exception is an authorization request sent by POST, which any site may send, as by GET.
    if (path === AUTHORIZE_PATH) app.on('POST', path, async (c, next) => ((await authorizeRequestPost(c)) ? next() : formOrigin(c, next)))
    else if (path !== APPLICATIONS_PATH) app.on('POST', path, formOrigin)
  }
  // The logout endpoint is a page; relying parties may send it a form from their own site.
  app.use(END_SESSION_PATH, errorShape(renderPage), bodyCap('form'))
  // A form body is read first, with the same limit, straight from Node's stream; Hono's cap is
  // for the rest, since merely asking whether a request has a body builds a Fetch Request for it.
  const tooLarge = () => new AppError('payload_too_large', 'the request body is too large')
  const capped = bodyCap('request body')
  const capUnlessRead: typeof capped = (c, next) => (formCached(c) ? next() : capped(c, next))
  for (const path of Object.keys(REGISTRATION_METHODS)) app.use(path, errorShape(renderOAuthError), capped)
  for (const path of [...Object.keys(TOKEN_METHODS), ...OIDC_JSON_PATHS])
    app.use(path, errorShape(renderOAuthError), urlEncodedForm(config.http.requestBodyLimitBytes, tooLarge), capUnlessRead)
  // Other methods on the info paths, and anything else under /user/oauth, answer in OAuth's shape.
  for (const path of [...Object.keys(INFO_METHODS), '/user/oauth/*']) app.use(path, errorShape(renderOAuthError))

  // Relying parties that run in a browser read these from their own origin: the public documents
  // from any origin, the endpoints that answer a client's tokens from that client's origins only:
  // those taking client credentials from public clients' origins, UserInfo from any sign-on client's.
  for (const path of [OPENID_CONFIGURATION_PATH, JWKS_PATH, METADATA_PATH]) app.use(path, cors({origin: '*', maxAge: 600}))
  const publicApps = clientCors(deps, 'public')
  for (const path of [TOKEN_PATH, REVOKE_PATH]) app.use(path, publicApps)
  app.use(USERINFO_PATH, clientCors(deps, 'sign-on'))

  registerSecuritySchemes(app)
  pageRoutes(app, ctx)
  tokenRoutes(app, ctx)
  infoRoutes(app, ctx)
  oidcRoutes(app, ctx)
  registrationRoutes(app, ctx)
  if (deps.demo) demoRoutes(app, ctx)

  const served = {...PAGE_METHODS, ...TOKEN_METHODS, ...INFO_METHODS, ...OIDC_METHODS, ...REGISTRATION_METHODS, [METADATA_PATH]: ['GET']}
  for (const [path, methods] of Object.entries(served)) app.all(path, methodNotAllowed(...methods))
  return app
}

/** Whether a POST to the authorize endpoint is a relying party's authorization request (a form without the consent page's fields). */
async function authorizeRequestPost(c: Context): Promise<boolean> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(requestHeader(c, 'content-type') ?? '')) return false
  return isAuthorizeRequestPost(await c.req.parseBody())
}

function registerSecuritySchemes(app: OpenAPIHono): void {
  const registry = app.openAPIRegistry
  registry.registerComponent('securitySchemes', 'bearer', {type: 'http', scheme: 'bearer'})
  registry.registerComponent('securitySchemes', 'clientSecretBasic', {type: 'http', scheme: 'basic', description: 'client_id:client_secret (RFC 6749 §2.3.1)'})
  registry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    flows: {
      authorizationCode: {
        authorizationUrl: '/oauth/authorize',
        tokenUrl: '/oauth/token',
        scopes: {
          openid: 'OpenID Connect: an ID token naming the member, and UserInfo',
          profile: "the member's name, country of practice and specialty",
          email: "OpenID Connect: the member's e-mail address",
        },
      },
      clientCredentials: {tokenUrl: '/oauth/token', scopes: {pulses: "the client's own pulse exports (interface D)"}},
    },
  })
}
