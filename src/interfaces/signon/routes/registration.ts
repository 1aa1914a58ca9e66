import type {Context} from 'hono'
import type {OpenAPIHono} from '@hono/zod-openapi'
import {AppError} from '../../../errors.js'
import {presentedCredential} from '../../../http/bearer-auth.js'
import {jsonResponse, requestHeader} from '../../../http/fast.js'
import {narrowParts, type StoreParts} from '../../../store/database.js'
import {
  deleteDynamicClient,
  registeredClient,
  registerDynamicClient,
  registrationEnabled,
  registrationResponse,
  replaceDynamicClient,
} from '../../../registry/dynamic-registration.js'
import type {RegistryDb} from '../../../registry/tables.js'
import type {SignonContext} from './context.js'

export const REGISTRATION_PATH = '/oauth/register'
export const REGISTERED_CLIENT_PATH = '/oauth/register/:client_id'

/** The methods each registration path serves. */
export const REGISTRATION_METHODS: Record<string, string[]> = {
  [REGISTRATION_PATH]: ['POST'],
  [REGISTERED_CLIENT_PATH]: ['GET', 'PUT', 'DELETE'],
}

const NO_STORE = {'Cache-Control': 'no-store', Pragma: 'no-cache'}

/** The token of an `Authorization: Bearer` header, or undefined (a DPoP-bound credential is not one of these). */
function bearerOf(c: Context): string | undefined {
  const credential = presentedCredential(requestHeader(c, 'authorization'))
  return credential?.scheme === 'Bearer' ? credential.token : undefined
}

/** The request's JSON body: anything else is metadata RFC 7591 cannot read. */
async function metadataOf(c: Context): Promise<unknown> {
  if (!/^application\/json\b/i.test(requestHeader(c, 'content-type') ?? '')) throw new AppError('invalid_client_metadata', 'the body must be application/json')
  try {
    return await c.req.json()
  } catch {
    throw new AppError('invalid_client_metadata', 'the body is not valid JSON')
  }
}

/**
 * Dynamic client registration (RFC 7591) and management (RFC 7592). While no initial access token
 * is live the registration endpoint does not exist (404) and discovery does not name it.
 */
export function registrationRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  const store: StoreParts<RegistryDb> = narrowParts(ctx.deps)
  const {clock} = ctx.deps
  const clientUri = (c: Context, id: string) => `${ctx.issuerOf(c)}${REGISTRATION_PATH}/${encodeURIComponent(id)}`

  // Only new registrations close with the last initial access token: a client registered earlier
  // keeps managing itself with its registration access token.
  app.use(REGISTRATION_PATH, async (_c, next) => {
    if (!(await registrationEnabled(store.reader, clock.now()))) throw new AppError('not_found', 'client registration is not enabled')
    await next()
  })

  app.post(REGISTRATION_PATH, async (c) => {
    const now = clock.now()
    const metadata = await metadataOf(c)
    const result = await registerDynamicClient(store, bearerOf(c), metadata, now)
    const body = {
      ...registrationResponse(result.view, clientUri(c, result.view.client_id), now),
      ...(result.client_secret === undefined ? {} : {client_secret: result.client_secret, client_secret_expires_at: 0}),
      registration_access_token: result.registration_access_token,
    }
    return jsonResponse(c, body, 201, NO_STORE)
  })

  app.get(REGISTERED_CLIENT_PATH, async (c) => {
    const id = c.req.param('client_id')
    const {view, createdAt} = await registeredClient(store.reader, id, bearerOf(c))
    return jsonResponse(c, registrationResponse(view, clientUri(c, id), createdAt), 200, NO_STORE)
  })

  app.put(REGISTERED_CLIENT_PATH, async (c) => {
    const id = c.req.param('client_id')
    const metadata = await metadataOf(c)
    const {view, createdAt} = await replaceDynamicClient(store, id, bearerOf(c), metadata, clock.now())
    return jsonResponse(c, registrationResponse(view, clientUri(c, id), createdAt), 200, NO_STORE)
  })

  app.delete(REGISTERED_CLIENT_PATH, async (c) => {
    await deleteDynamicClient(store, c.req.param('client_id'), bearerOf(c), clock.now())
    return c.body(null, 204)
  })
}
