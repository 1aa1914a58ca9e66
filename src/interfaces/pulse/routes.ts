import {OpenAPIHono, createRoute} from '@hono/zod-openapi'
import type {Context, TypedResponse} from 'hono'
import type {RouteDeps, ServedInterface} from '../../deps.js'
import {AppError} from '../../errors.js'
import {bearerToken} from '../../http/bearer-auth.js'
import type {TokenEnv} from '../../http/env.js'
import {methodNotAllowed} from '../../http/method-not-allowed.js'
import {presentToken} from '../../grants/service.js'
import {serviceOrigin} from '../../http/allowed-hosts.js'
import {errorShape} from '../../http/error-shape.js'
import {renderOAuthError} from '../../http/oauth-error.js'
import {schemaHook} from '../../http/validation.js'
import {clientInfoResponse, exportSchema, oauthErrorBody, projectIdParam, projectsInfoResponse, type PulseDocument} from './schema.js'
import * as pulses from './service.js'
import {jsonResponse} from '../../http/fast.js'

const TAG = 'D. Pulse export'
const errors = {
  401: {description: 'Missing, invalid, expired or revoked access token (with WWW-Authenticate: Bearer)', content: {'application/json': {schema: oauthErrorBody}}},
  403: {
    description: "insufficient_scope: a member's sign-on token, a token without the pulses scope, or a client without the pulses grant",
    content: {'application/json': {schema: oauthErrorBody}},
  },
}

/** A client's own bearer token: client_credentials with the pulses scope. */
const pulsesSecurity: Record<string, string[]>[] = [{bearer: []}, {oauth2: ['pulses']}]

const exportRoute = createRoute({
  operationId: 'exportPulse',
  method: 'get',
  path: '/projects/{projectId}/export',
  summary: 'Export a pulse: definition, respondents and answers (streamed)',
  tags: [TAG],
  security: pulsesSecurity,
  request: {params: projectIdParam},
  responses: {
    200: {description: 'The project export object', content: {'application/json': {schema: exportSchema}}},
    ...errors,
    404: {description: "No such pulse among the caller's projects", content: {'application/json': {schema: oauthErrorBody}}},
  },
})

const projectsInfoRoute = createRoute({
  operationId: 'listClientProjects',
  method: 'get',
  path: '/clients/projectsInfo',
  summary: 'Ids of the pulses the caller may export',
  tags: [TAG],
  security: pulsesSecurity,
  responses: {200: {description: 'Client projects object', content: {'application/json': {schema: projectsInfoResponse}}}, ...errors},
})

const clientInfoRoute = createRoute({
  operationId: 'clientInfo',
  method: 'get',
  path: '/clients/info',
  summary: 'Whether the caller is an admin, and its pulses with status and last status change',
  tags: [TAG],
  security: pulsesSecurity,
  responses: {200: {description: 'Client info object', content: {'application/json': {schema: clientInfoResponse}}}, ...errors},
})

const NO_STORE = {'Cache-Control': 'no-store', Pragma: 'no-cache'}

/**
 * Exports hold every respondent's answers, so only the owning client acting for itself may read
 * them: a token issued by client_credentials (no member behind it) with the pulses scope, whose
 * client still holds the pulses grant. A member's sign-on token is refused even when its client
 * owns pulses: the member consented to share their profile, not the client's data.
 */
async function requirePulsesToken(c: Context<TokenEnv>, next: () => Promise<void>) {
  const token = c.get('token')
  const reason =
    token.memberId !== null
      ? 'This token acts for a member; pulse exports need a client_credentials token with the pulses scope'
      : !token.scopes.includes('pulses')
        ? 'The access token lacks the pulses scope'
        : !token.clientGrants.includes('pulses')
          ? 'This client does not have the pulses grant'
          : null
  if (reason !== null) {
    throw new AppError('insufficient_scope', reason, {challenge: {scheme: 'Bearer', error: 'insufficient_scope', scope: 'pulses'}})
  }
  await next()
}

function viewer(c: Context<TokenEnv>): pulses.Viewer {
  const token = c.get('token')
  return {clientId: token.clientId, admin: token.clientAdmin}
}

/**
 * Pulls one chunk from the generator each time the socket wants more, so a slow reader holds the
 * export back instead of it piling up in memory.
 */
function toByteStream(chunks: AsyncGenerator<Uint8Array, void, undefined>, onError: (error: unknown) => void): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await chunks.next()
          if (next.done) controller.close()
          else controller.enqueue(next.value)
        } catch (error) {
          onError(error)
          controller.error(error)
        }
      },
      async cancel() {
        await chunks.return(undefined)
      },
    },
    {highWaterMark: 1},
  )
}

/** Interface D as the app serves it. */
export const pulseInterface: ServedInterface = {label: 'D', title: 'pulse export (D)', prefixes: ['/projects', '/clients'], routes: (deps) => pulseRoutes(deps)}

export function pulseRoutes(deps: RouteDeps): OpenAPIHono<TokenEnv> {
  const {db, logger} = deps
  // Every route here is behind bearerToken (below), so each reads the token it authenticated.
  const app = new OpenAPIHono<TokenEnv>({defaultHook: schemaHook()})

  const paths = ['/projects/:projectId/export', '/clients/projectsInfo', '/clients/info']
  for (const path of paths) {
    // No answerAs: a refusal's body names the code its challenge names (RFC 6750 §3.1).
    app.use(
      path,
      errorShape(renderOAuthError),
      bearerToken({verify: (token) => presentToken(deps, token, deps.clock.now()), origin: (c) => serviceOrigin(deps.baseUrl, c)}),
      requirePulsesToken,
    )
  }

  app.openapi(exportRoute, async (c) => {
    const {projectId} = c.req.valid('param')
    const prepared = await pulses.prepareExport(db, viewer(c), projectId)
    const requestId = c.get('requestId') ?? '-'
    const body = toByteStream(prepared.chunks(), (error) => {
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
      logger.log('error', `error id=${requestId} export of ${prepared.projectId} failed mid-stream: ${detail}`, 'pulse export failed mid-stream', {
        request_id: requestId,
        interface: 'D',
        project_id: prepared.projectId,
        error: detail,
      })
    })
    // Streamed, so it cannot go through c.json; the cast tells the route typing this is the export document.
    const response = c.body(body, 200, {'Content-Type': 'application/json; charset=utf-8', ...NO_STORE})
    return response as unknown as TypedResponse<PulseDocument, 200, 'json'>
  })

  app.openapi(projectsInfoRoute, async (c) => jsonResponse(c, await pulses.clientProjects(db, viewer(c)), 200, NO_STORE))
  app.openapi(clientInfoRoute, async (c) => jsonResponse(c, await pulses.clientInfo(db, viewer(c)), 200, NO_STORE))

  for (const path of paths) app.all(path, methodNotAllowed('GET'))
  return app
}
