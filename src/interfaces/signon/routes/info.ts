import {createRoute, type OpenAPIHono} from '@hono/zod-openapi'
import type {RouteDeps} from '../../../deps.js'
import {bearerTokenGuard, presentedCredential} from '../../../http/bearer-auth.js'
import type {FrontRoute} from '../../../http/front-door.js'
import {useErrorShape} from '../../../http/error-shape.js'
import {jsonResponse} from '../../../http/fast.js'
import {renderOAuthError} from '../../../http/oauth-error.js'
import {type PresentedToken, peekLiveToken, presentToken} from '../../../grants/service.js'
import {memberInfoResponse, oauthError, tokenInfoResponse} from '../schema.js'
import {memberInfo, tokenInfo} from '../resources.js'
import type {SignonContext} from './context.js'

const TOKEN_INFO_PATHS = ['/user/oauth/token/info', '/oauth/token/info']
const MEMBER_INFO_PATHS = ['/user/oauth/user/info', '/oauth/user/info']

/** The info routes and the methods each serves. */
export const INFO_METHODS: Record<string, string[]> = Object.fromEntries([...TOKEN_INFO_PATHS, ...MEMBER_INFO_PATHS].map((path) => [path, ['GET']]))

/** Token and member info: RFC 6750 asks no Pragma of resource answers, and these are polled hard. */
const INFO_NO_STORE = {'cache-control': 'no-store'}

/** The headers jsonResponse writes for token info, after X-Request-Id and in its order: the front door's answer sends the same. */
const TOKEN_INFO_HEADERS = {'content-type': 'application/json', ...INFO_NO_STORE}

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

/**
 * Token info and member info, the Doorkeeper-style resources partners poll. Token info is the
 * hottest route (partners are told to poll it), so its checks run inside the handler: each
 * middleware layer would cost a share of its throughput.
 */
export function infoRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  const {clock} = ctx.deps
  const verify = (token: PresentedToken) => presentToken(ctx.deps, token, clock.now())
  // Token info answers a dead token with invalid_request and 401, as the interface always has.
  const oauthShape = useErrorShape(renderOAuthError)
  const tokenBearer = bearerTokenGuard({verify, origin: ctx.issuerOf, answerAs: 'invalid_request'})
  const memberBearer = bearerTokenGuard({verify, origin: ctx.issuerOf, answerAs: 'invalid_token'})
  for (const path of TOKEN_INFO_PATHS) {
    app.openapi(infoRoute(path, 'token'), async (c) => {
      oauthShape(c)
      return jsonResponse(c, tokenInfo(await tokenBearer(c)), 200, INFO_NO_STORE)
    })
  }
  for (const path of MEMBER_INFO_PATHS) {
    app.openapi(infoRoute(path, 'member'), async (c) => {
      oauthShape(c)
      return jsonResponse(c, memberInfo(await memberBearer(c)), 200, INFO_NO_STORE)
    })
  }
}

/**
 * Token info from the front door (http/front-door.ts): the route's answer to a bearer token whose
 * row is remembered at the store's current version and live (grants/service.ts peekLiveToken),
 * with nothing read and no promise made. Anything else, a DPoP header among it, is the route's.
 */
export function tokenInfoFront(deps: Pick<RouteDeps, 'db' | 'reader' | 'keys' | 'clock'>): FrontRoute {
  return {
    paths: TOKEN_INFO_PATHS,
    answer: (request) => {
      const authorization = request.headers.authorization
      if (authorization === undefined || request.headers.dpop !== undefined) return undefined
      const credential = presentedCredential(authorization)
      if (credential?.scheme !== 'Bearer') return undefined
      const live = peekLiveToken(deps, credential.token, deps.clock.now())
      return live && {body: JSON.stringify(tokenInfo(live)), headers: TOKEN_INFO_HEADERS}
    },
  }
}
