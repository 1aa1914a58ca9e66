import {createRoute, type OpenAPIHono} from '@hono/zod-openapi'
import type {Context} from 'hono'
import {DEMO_BASE_URL, DEMO_CLIENT_ID, DEMO_MEMBER} from '../../../demo-data.js'
import {AppError, type ClientReturn} from '../../../errors.js'
import {clientAddress} from '../../../http/client-address.js'
import {errorHeaders, type ErrorRenderer} from '../../../http/error-shape.js'
import {formTarget, pagePolicy, scriptHash} from '../../../http/page-headers.js'
import {revokeConsent} from '../../../registry/service.js'
import {withIssuer} from '../discovery.js'
import {redirectWith, responseFields} from '../authorization-response.js'
import {signInSuffices} from '../oidc.js'
import {ApplicationsPage, ConsentPage, ErrorPage, FORM_POST_SCRIPT, FormPostPage, RevokeConfirmPage, SignInPage} from '../pages.js'
import {applicationForm, authorizeQuery, consentForm, signInForm, signOutForm} from '../schema.js'
import {allow, type AuthorizeRequest, type CheckedAuthorizeRequest, checkAuthorizeRequest, deny, redirectError} from '../authorize.js'
import {noteSignInFor, PUSHABLE, spendPushedRequest} from '../pushed-requests.js'
import {authorizedApplications, scopesNotYetAllowed} from '../consent.js'
import {closeSession, openSession, signOutEverywhere} from '../sessions.js'
import {signIn} from '../sign-in.js'
import {endSession, giveDevice, readDevice, readSession, startSession} from '../session-cookie.js'
import {config} from '../../../config.js'
import type {SignonContext} from './context.js'
import {responseHeader} from '../../../http/fast.js'

/** The demo's client on the demo's default address: the examples work against `serve --demo`. */
export const AUTHORIZE_EXAMPLE = {
  client_id: DEMO_CLIENT_ID,
  redirect_uri: `${DEMO_BASE_URL}/demo/callback`,
  response_type: 'code',
  state: 'af0ifjsldkj',
  scope: 'profile',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCQaoeEKmfhB4jv_1ZdOrPV8',
  code_challenge_method: 'S256',
}

export const APPLICATIONS_PATH = '/oauth/authorized_applications'
export const AUTHORIZE_PATH = '/oauth/authorize'
const SESSION_PATH = '/oauth/session'
const SIGN_OUT_PATH = '/oauth/sign_out'
const REVOKE_APPLICATION_PATH = `${APPLICATIONS_PATH}/revoke`

/** The pages a browser opens and the forms it posts, with the methods each serves. */
export const PAGE_METHODS: Record<string, string[]> = {
  [AUTHORIZE_PATH]: ['GET', 'POST'],
  [SESSION_PATH]: ['POST'],
  [APPLICATIONS_PATH]: ['GET'],
  [REVOKE_APPLICATION_PATH]: ['POST'],
  [SIGN_OUT_PATH]: ['POST'],
}

const BACK_TO_CLIENT = 'This form has expired. Go back to the application and start again.'

const FORM_POST_HASH = scriptHash(FORM_POST_SCRIPT)

/**
 * Sends an authorization response, a code or an error, back to the client in its response mode,
 * naming the issuer (RFC 9207): a redirect (query), or a page whose form the browser posts to the
 * redirect URI (form_post). That page's policy runs its one script, by hash, and lets its form
 * lead only to the redirect URI's origin (or a native app's scheme); it is never cached.
 */
export function answerClient(c: Context, answer: ClientReturn, issuer: string): Response | Promise<Response> {
  if (answer.mode === 'query') return c.redirect(withIssuer(redirectWith(answer.redirectUri, answer.params), issuer), 302)
  return c.html(<FormPostPage action={answer.redirectUri} fields={responseFields(answer, issuer)} />, 200, {
    'Cache-Control': 'no-store',
    'Content-Security-Policy': pagePolicy([formTarget(answer.redirectUri)], [FORM_POST_HASH]),
  })
}

/**
 * Browser-facing errors: back to the client when that is safe (in its response mode, naming the
 * issuer, RFC 9207), else an HTML page.
 */
export const pageRenderer =
  (issuerOf: (c: Context) => string): ErrorRenderer =>
  (c, error) => {
    if (error.clientReturn) return answerClient(c, error.clientReturn, issuerOf(c))
    const title = error.status >= 500 ? 'Something went wrong' : 'This sign-in request cannot continue'
    return c.html(<ErrorPage title={title} message={error.message} />, error.status as 400, {...errorHeaders(error), 'Cache-Control': 'no-store'})
  }

// Every route below is a browser page or form: the member signs in on it, with no API credentials.
const authorizePage = createRoute({
  method: 'get',
  operationId: 'authorizePage',
  path: AUTHORIZE_PATH,
  summary: 'Start sign-on: shows the sign-in form, then the consent page',
  tags: ['A. Sign-on'],
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
  path: AUTHORIZE_PATH,
  summary: 'The member allows or denies; redirects to the client with code or error',
  tags: ['A. Sign-on'],
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
  path: SESSION_PATH,
  summary: "Member sign-in with e-mail and password (the consent page's first form)",
  tags: ['A. Sign-on'],
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

const applicationsPage = createRoute({
  method: 'get',
  operationId: 'authorizedApplicationsPage',
  path: APPLICATIONS_PATH,
  summary: 'The applications a member allowed, each with a Revoke button (sign in first)',
  tags: ['A. Sign-on'],
  security: [],
  responses: {200: {description: 'HTML page: the list, or the sign-in form when not signed in'}},
})

const revokeApplication = createRoute({
  method: 'post',
  operationId: 'revokeApplication',
  path: REVOKE_APPLICATION_PATH,
  summary: "Take an application's access back (with confirm=yes): its tokens and pending codes end at once",
  tags: ['A. Sign-on'],
  security: [],
  request: {
    body: {content: {'application/x-www-form-urlencoded': {schema: applicationForm, example: {csrf_token: 'FROM_THE_PAGE', client_id: DEMO_CLIENT_ID, confirm: 'yes'}}}},
  },
  responses: {
    200: {description: 'Without confirm=yes: HTML page asking to confirm, whose form posts here again with confirm=yes'},
    303: {description: 'Taken back; back to the list'},
    400: {description: 'HTML error page'},
    403: {description: 'HTML error page: expired form or foreign origin'},
  },
})

const signOut = createRoute({
  method: 'post',
  operationId: 'signOut',
  path: SIGN_OUT_PATH,
  summary: "End the member's sign-in session on this browser",
  tags: ['A. Sign-on'],
  security: [],
  request: {body: {content: {'application/x-www-form-urlencoded': {schema: signOutForm, example: {csrf_token: 'FROM_THE_PAGE'}}}}},
  responses: {
    303: {description: "Back to the (now signed-out) applications page, or to return_to's authorize request"},
    400: {description: 'HTML error page: return_to is not an address of the authorize page'},
    403: {description: 'HTML error page: expired form or foreign origin'},
  },
})

/**
 * Where a sign-out may send the browser back to: only this service's authorize page, as a
 * relative address. The address is rebuilt from its query, so nothing but that page can come out
 * of it (no other host, path or scheme: never an open redirect). Undefined for anything else.
 */
function authorizeReturn(value: string): string | undefined {
  if (value !== AUTHORIZE_PATH && !value.startsWith(`${AUTHORIZE_PATH}?`)) return undefined
  const base = 'http://medpanel.invalid'
  if (!URL.canParse(value, base)) return undefined
  const url = new URL(value, base)
  if (url.origin !== base || url.pathname !== AUTHORIZE_PATH) return undefined
  return `${AUTHORIZE_PATH}${url.search}`
}

/** The authorize parameters a form carries along, so no server-side flow state is needed. */
function formParams(form: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(PUSHABLE.map((name) => [name, form[name]]))
}

/**
 * Where the browser goes back to once the member has signed in: the same request, less what asked
 * for the sign-in that just happened (prompt=login, max_age), or it would ask again forever.
 */
function afterSignIn(params: Record<string, string | undefined>): Record<string, string | undefined> {
  const prompt = (params.prompt ?? '')
    .split(' ')
    .filter((value) => value !== '' && value !== 'login' && value !== 'select_account')
    .join(' ')
  return {...params, prompt: prompt === '' ? undefined : prompt, max_age: undefined}
}

/**
 * Whether a POST to the authorize endpoint is an authorization request (the relying party's form,
 * Core §3.1.2.1) rather than the consent page's answer, which always carries its CSRF token and a
 * decision.
 */
export function isAuthorizeRequestPost(form: {csrf_token?: string | undefined; decision?: string | undefined}): boolean {
  return form.csrf_token === undefined && form.decision === undefined
}

function authorizeRequest(form: Record<string, string | undefined>): AuthorizeRequest {
  // request is read only to be refused; request_uri names a pushed request (RFC 9126).
  return {...formParams(form), client_id: form.client_id ?? '', redirect_uri: form.redirect_uri ?? '', request: form.request, request_uri: form.request_uri}
}

/**
 * What the pages carry on to the next step: for a pushed request only its client_id and
 * request_uri (the parameters stay on the server, out of the browser's reach); else the request's
 * own parameters.
 */
function carried(form: Record<string, string | undefined>, checked: CheckedAuthorizeRequest): Record<string, string | undefined> {
  return checked.pushed === undefined ? formParams(form) : {client_id: checked.client.id, request_uri: form.request_uri}
}

/** The authorization endpoint and the forms around it: sign-in, consent, the applications page, sign-out. */
export function pageRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  app.openapi(authorizePage, async (c) => authorizeFlow(ctx, c, c.req.valid('query')))
  signInRoute(app, ctx)
  decideRoute(app, ctx)
  applicationRoutes(app, ctx)
  signOutRoute(app, ctx)
}

/**
 * The authorization request, by GET or by a form POST (OpenID Connect Core §3.1.2.1: both must
 * work): the sign-in page, the consent page, or straight back to the client with a code when
 * the member is signed in and already allowed everything asked (remembered consent), unless the
 * client asked for the page (prompt=consent).
 */
async function authorizeFlow(ctx: SignonContext, c: Context, query: Record<string, string | undefined>) {
  const {db, clock} = ctx.deps
  const now = clock.now()
  const checked = await checkAuthorizeRequest(db, authorizeRequest(query), now)
  const signed = await ctx.signedIn(c)
  // OpenID Connect may ask for a fresh sign-in (prompt=login, max_age); plain OAuth never does.
  const current = signed && (!checked.oidc || signInSuffices(checked.oidc, signed.signedInAt, now)) ? signed : undefined
  const notYet = current ? await scopesNotYetAllowed(db, current.member.id, checked, now) : checked.scopes
  if (checked.oidc?.prompt.has('none')) {
    // No page may be shown: a code if nothing needs the member, else the reason, to the client.
    const refusal = !current
      ? redirectError(checked, 'login_required', 'the member must sign in')
      : notYet.length > 0
        ? redirectError(checked, 'consent_required', 'the member has not allowed this yet')
        : undefined
    if (refusal) {
      if (checked.pushed !== undefined) await spendPushedRequest(db, checked.pushed, now)
      throw refusal
    }
  }
  if (current && notYet.length === 0 && !checked.oidc?.prompt.has('consent')) {
    return answerClient(c, await allow(db, checked, current.member.id, now, current, ctx.deps.metrics), ctx.issuerOf(c))
  }
  const csrf = await ctx.formToken(c)
  const params = carried(query, checked)
  responseHeader(c, 'Cache-Control', 'no-store')
  responseHeader(c, 'X-Frame-Options', 'DENY')
  // Allow and Deny answer with a redirect to the client, and so may signing in, when the member
  // allowed this before: the page's policy must let its form lead there.
  responseHeader(c, 'Content-Security-Policy', pagePolicy([formTarget(checked.redirectUri)]))
  if (!current) return c.html(<SignInPage client={checked.client} params={params} csrf={csrf} email={checked.oidc?.loginHint} />)
  // Sign out comes back to this same request, now at its sign-in form.
  const returnTo = `${AUTHORIZE_PATH}?${new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined))}`
  // The page asks for what is new; with prompt=consent, for everything again.
  const asked = notYet.length > 0 ? notYet : checked.scopes
  return c.html(<ConsentPage client={checked.client} memberName={current.member.first_name} scopes={asked} params={params} csrf={csrf} returnTo={returnTo} />)
}

/** The sign-in form: back to the authorize request (or the applications page) once signed in. */
function signInRoute(app: OpenAPIHono, ctx: SignonContext): void {
  const {db, clock} = ctx.deps
  app.openapi(createSession, async (c) => {
    const form = c.req.valid('form')
    await ctx.requireFormToken(c, form.csrf_token, BACK_TO_CLIENT)
    // Signing in to manage one's applications needs no authorize request; anything else does.
    const toApplications = form.return_to === APPLICATIONS_PATH
    const checked = toApplications ? undefined : await checkAuthorizeRequest(db, authorizeRequest(form), clock.now())
    const params = checked === undefined ? {return_to: APPLICATIONS_PATH} : carried(form, checked)
    const secret = await ctx.cookieSecret()
    try {
      const address = clientAddress(c)
      const device = await readDevice(c, secret)
      const member = await signIn(db, form.email ?? '', form.password ?? '', {clock, address, device, exempt: ctx.guessingExempt(address), metrics: ctx.deps.metrics})
      // A new session id at every sign-in; the one this browser had before, if any, ends.
      const sessionId = await openSession(db, member.id, await readSession(c, secret), clock.now())
      await startSession(c, secret, sessionId, ctx.publicHttps)
      // This browser is now one the member signed in from: guesses elsewhere never lock it out.
      await giveDevice(c, secret, member.id, clock.now(), config.throttle.deviceCookieSeconds, ctx.publicHttps)
    } catch (error) {
      // Wrong password, inactive member, or too many attempts: all shown on the sign-in page.
      if (!(error instanceof AppError) || (error.code !== 'access_denied' && error.code !== 'too_many_requests')) throw error
      const csrf = await ctx.formToken(c)
      return c.html(<SignInPage client={checked?.client} params={params} csrf={csrf} error={error.message} />, error.status as 401, error.headers)
    }
    if (toApplications) return c.redirect(APPLICATIONS_PATH, 303)
    // A pushed request keeps its parameters on the server: it is told the sign-in happened.
    if (checked?.pushed !== undefined) await noteSignInFor(db, checked.pushed, clock.now())
    const query = new URLSearchParams(Object.entries(checked?.pushed === undefined ? afterSignIn(params) : params).filter((e): e is [string, string] => e[1] !== undefined))
    return c.redirect(`${AUTHORIZE_PATH}?${query}`, 303)
  })
}

/** The consent page's answer (or an authorization request sent by POST). */
function decideRoute(app: OpenAPIHono, ctx: SignonContext): void {
  const {db, clock} = ctx.deps
  app.openapi(decide, async (c) => {
    const form = c.req.valid('form')
    // A form with no decision is an authorization request sent by POST, from any site.
    if (isAuthorizeRequestPost(form)) return authorizeFlow(ctx, c, form)
    await ctx.requireFormToken(c, form.csrf_token, BACK_TO_CLIENT)
    const checked = await checkAuthorizeRequest(db, authorizeRequest(form), clock.now())
    const signed = await ctx.signedIn(c)
    if (!signed) return c.html(<SignInPage client={checked.client} params={carried(form, checked)} csrf={await ctx.formToken(c)} error="Please sign in again." />, 401)
    if (form.decision === 'allow') return answerClient(c, await allow(db, checked, signed.member.id, clock.now(), signed, ctx.deps.metrics), ctx.issuerOf(c))
    if (form.decision === 'deny') {
      if (checked.pushed !== undefined) await spendPushedRequest(db, checked.pushed, clock.now())
      return answerClient(c, deny(checked), ctx.issuerOf(c))
    }
    throw new AppError('invalid_request', 'decision must be allow or deny')
  })
}

/** The applications a member allowed, and taking one back. */
function applicationRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  const {db, clock} = ctx.deps
  app.openapi(applicationsPage, async (c) => {
    const csrf = await ctx.formToken(c)
    responseHeader(c, 'Cache-Control', 'no-store')
    const member = await ctx.sessionMember(c)
    if (!member) return c.html(<SignInPage params={{return_to: APPLICATIONS_PATH}} csrf={csrf} />)
    const applications = await authorizedApplications(db, member.id, clock.now())
    return c.html(<ApplicationsPage memberName={`${member.first_name} ${member.last_name}`} applications={applications} csrf={csrf} />)
  })

  app.openapi(revokeApplication, async (c) => {
    const form = c.req.valid('form')
    await ctx.requireFormToken(c, form.csrf_token)
    const member = await ctx.sessionMember(c)
    if (!member) return c.redirect(APPLICATIONS_PATH, 303)
    // Only an application this member allowed can be taken back from here.
    const allowed = await authorizedApplications(db, member.id, clock.now())
    const application = allowed.find((a) => a.client_id === form.client_id)
    if (!application) throw new AppError('bad_request', 'That application has no access to take back.')
    // Revoke asks first: only the confirming form (confirm=yes) takes the access back.
    if (form.confirm !== 'yes') {
      responseHeader(c, 'Cache-Control', 'no-store')
      return c.html(<RevokeConfirmPage application={application} csrf={await ctx.formToken(c)} />, 200)
    }
    await revokeConsent(db, member.id, application.client_id, clock.now(), ctx.deps.metrics)
    return c.redirect(APPLICATIONS_PATH, 303)
  })
}

/** Signing out on this browser, or everywhere. */
function signOutRoute(app: OpenAPIHono, ctx: SignonContext): void {
  const {db, clock} = ctx.deps
  app.openapi(signOut, async (c) => {
    const form = c.req.valid('form')
    await ctx.requireFormToken(c, form.csrf_token)
    // Checked before anything changes: a refused return_to leaves the session as it was.
    const back = form.return_to === undefined ? APPLICATIONS_PATH : authorizeReturn(form.return_to)
    if (!back) throw new AppError('bad_request', 'return_to must be an address of the authorize page of this service.')
    // Ended on the server first: a copy of the cookie kept anywhere no longer opens anything.
    if (form.everywhere === 'yes') {
      const member = await ctx.sessionMember(c)
      // Every session and every device cookie of the member, in every browser, as one session end.
      if (member) await signOutEverywhere(db, member.id, clock.now())
    }
    await closeSession(db, await readSession(c, await ctx.cookieSecret()), clock.now())
    endSession(c)
    return c.redirect(back, 303)
  })
}
