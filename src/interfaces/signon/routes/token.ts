import {registrationEnabled} from '../../../registry/dynamic-registration.js'
import {narrow} from '../../../store/database.js'
import {createRoute, type OpenAPIHono, type z} from '@hono/zod-openapi'
import type {Context} from 'hono'
import {DEMO_BASE_URL, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET} from '../../../demo-data.js'
import {AppError} from '../../../errors.js'
import {readBasicCredentials} from '../../../http/basic-auth.js'
import {checkedForm, jsonResponse, requestHeader} from '../../../http/fast.js'
import {clientAddress} from '../../../http/client-address.js'
import {authorizationServerMetadata} from '../discovery.js'
import {introspectForm, introspectionResponse, oauthError, parForm, parResponse, revocationResponse, revokeForm, serverMetadata, tokenForm, tokenResponse} from '../schema.js'
import {pushAuthorizationRequest} from '../authorize.js'
import {type ClientCredentials, requireTokenClient} from '../client-auth.js'
import {assertionIssuer, CLIENT_ASSERTION_TYPE} from '../client-assertion.js'
import {clientAuthFailed} from '../client-auth-failure.js'
import {GRANT_FLOWS} from '../grant-types.js'
import {grantParameters} from '../flows/index.js'
import {introspect, revoke} from '../introspection.js'
import {checkProof, currentNonce} from '../../../grants/dpop.js'
import type {SignonContext} from './context.js'
import {corsClient} from './cors.js'
import {signonMetrics} from '../metrics.js'
import type {Metrics} from '../../../metrics/metrics.js'

/** The endpoints a client calls with its own credentials, and the methods each serves. */
export const TOKEN_PATH = '/oauth/token'
export const REVOKE_PATH = '/oauth/revoke'
export const INTROSPECT_PATH = '/oauth/introspect'
export const PAR_PATH = '/oauth/par'
export const TOKEN_METHODS: Record<string, string[]> = {
  [TOKEN_PATH]: ['POST'],
  [REVOKE_PATH]: ['POST'],
  [INTROSPECT_PATH]: ['POST'],
  [PAR_PATH]: ['POST'],
}
export const METADATA_PATH = '/.well-known/oauth-authorization-server'

const NO_STORE = {'Cache-Control': 'no-store', Pragma: 'no-cache'}
/**
 * HTTP Basic, or client_id and client_secret as fields of the form body (client_secret_post).
 * OpenAPI has no security scheme for credentials in a body, so the second alternative names none
 * and the form's schema documents the two fields; a query parameter would be wrong (the server
 * refuses secrets there).
 */
const CLIENT_AUTH: Record<string, string[]>[] = [{clientSecretBasic: []}, {}]
const INVALID_CLIENT = {description: 'invalid_client', content: {'application/json': {schema: oauthError}}}

const metadataRoute = createRoute({
  method: 'get',
  operationId: 'authorizationServerMetadata',
  path: METADATA_PATH,
  summary: 'Authorization server metadata (RFC 8414): endpoints, grant types, PKCE, authentication methods',
  tags: ['A. Sign-on'],
  security: [],
  responses: {200: {description: 'The metadata document', content: {'application/json': {schema: serverMetadata}}}},
})

const revokeRoute = createRoute({
  method: 'post',
  operationId: 'revokeToken',
  path: '/oauth/revoke',
  summary: "Revoke one of the calling client's access tokens (RFC 7009)",
  tags: ['A. Sign-on'],
  security: CLIENT_AUTH,
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
    200: {
      description: "Done, or nothing to do: the answer is the same for an unknown token or another client's",
      content: {'application/json': {schema: revocationResponse}},
    },
    400: {
      description:
        "invalid_request; for a public client's refresh token bound to a DPoP key, invalid_request without a DPoP proof and invalid_dpop_proof (or use_dpop_nonce) with a proof of another key or a bad one: nothing is revoked",
      content: {'application/json': {schema: oauthError}},
    },
    401: INVALID_CLIENT,
  },
})

const introspectRoute = createRoute({
  method: 'post',
  operationId: 'introspectToken',
  path: '/oauth/introspect',
  summary: 'Describe an access or refresh token of the calling client (RFC 7662)',
  tags: ['A. Sign-on'],
  security: CLIENT_AUTH,
  request: {
    body: {
      content: {'application/x-www-form-urlencoded': {schema: introspectForm, example: {token: 'AN_ACCESS_TOKEN', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET}}},
    },
  },
  responses: {
    200: {description: "The token's state", content: {'application/json': {schema: introspectionResponse}}},
    400: {description: 'invalid_request', content: {'application/json': {schema: oauthError}}},
    401: INVALID_CLIENT,
  },
})

const parRoute = createRoute({
  method: 'post',
  operationId: 'pushAuthorizationRequest',
  path: PAR_PATH,
  summary: 'Push an authorization request (RFC 9126): its parameters over the back channel, a one-time request_uri back',
  tags: ['A. Sign-on'],
  security: CLIENT_AUTH,
  request: {
    body: {
      content: {
        'application/x-www-form-urlencoded': {
          schema: parForm,
          example: {
            response_type: 'code',
            client_id: DEMO_CLIENT_ID,
            client_secret: DEMO_CLIENT_SECRET,
            redirect_uri: `${DEMO_BASE_URL}/demo/callback`,
            scope: 'openid profile',
            state: 'af0ifjsldkj',
          },
        },
      },
    },
  },
  responses: {
    201: {description: 'The request_uri for /oauth/authorize?client_id=…&request_uri=…', content: {'application/json': {schema: parResponse}}},
    400: {
      description: 'invalid_request, invalid_scope, unauthorized_client, unsupported_response_type: what the authorize page would refuse',
      content: {'application/json': {schema: oauthError}},
    },
    401: INVALID_CLIENT,
  },
})

const tokenRoute = createRoute({
  method: 'post',
  operationId: 'token',
  path: '/oauth/token',
  summary: 'Exchange an authorization code (or client credentials) for an access token',
  tags: ['A. Sign-on'],
  security: CLIENT_AUTH,
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
    401: INVALID_CLIENT,
  },
})

/**
 * Client authentication: HTTP Basic or form fields, not both (RFC 6749 §2.3.1). A refusal of the
 * header gets its Basic challenge from the OAuth error renderer (http/oauth-error.ts).
 */
/** Who a client assertion may be addressed to: this issuer, or the endpoint called. */
interface Audience {
  issuer: string
  path: string
}

/**
 * The DPoP proof a request to one of these endpoints (token, PAR, revocation) carries, checked and
 * spent as at the token endpoint: its key's thumbprint, or null without one.
 */
async function presentedProof(ctx: SignonContext, c: Context, issuer: string, path: string, now: Date): Promise<string | null> {
  const proof = requestHeader(c, 'dpop')
  return proof === undefined ? null : checkProof(ctx.deps, proof, {htm: 'POST', htu: `${issuer}${path}`}, 'token endpoint', now)
}

/** The credentials a request presents, with the registry its refusals are counted in (undefined with metrics off). */
function clientCredentials(c: Context, form: PresentedForm, audience: Audience, metrics: Metrics | undefined): ClientCredentials {
  const credentials = presentedCredentials(c, form, audience)
  // A browser app's origin may read the answer only if it is one of this client's.
  corsClient(c, credentials.clientId)
  return metrics === undefined ? credentials : {...credentials, metrics}
}

type PresentedForm = {client_id?: string | undefined; client_secret?: string | undefined; client_assertion_type?: string | undefined; client_assertion?: string | undefined}

function presentedCredentials(c: Context, form: PresentedForm, audience: Audience): ClientCredentials {
  if (form.client_assertion !== undefined || form.client_assertion_type !== undefined) return presentedAssertion(c, form, audience)
  if (requestHeader(c, 'authorization') !== undefined) {
    const basic = readBasicCredentials(c, {formEncoded: true})
    if (!basic) throw clientAuthFailed('the Authorization header is not valid HTTP Basic')
    if (form.client_secret !== undefined) throw new AppError('invalid_request', 'send client credentials in the Authorization header or the body, not both')
    if (form.client_id !== undefined && form.client_id !== basic.username) throw new AppError('invalid_request', 'client_id in the body differs from the Authorization header')
    return {clientId: basic.username, clientSecret: basic.password, address: clientAddress(c)}
  }
  if (!form.client_id) throw clientAuthFailed('no client authentication: neither client_id nor a client_assertion')
  // Without a secret only a public client is proven (requireClient decides).
  return {clientId: form.client_id, clientSecret: form.client_secret, address: clientAddress(c)}
}

/** private_key_jwt: the client is the assertion's iss, and nothing else may authenticate the request too. */
function presentedAssertion(c: Context, form: PresentedForm, audience: Audience): ClientCredentials {
  if (requestHeader(c, 'authorization') !== undefined || form.client_secret !== undefined) {
    throw new AppError('invalid_request', 'authenticate the client one way: a client_assertion, or a secret, not both')
  }
  if (form.client_assertion_type !== CLIENT_ASSERTION_TYPE) throw new AppError('invalid_request', `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`)
  if (!form.client_assertion) throw new AppError('invalid_request', 'client_assertion is required with client_assertion_type')
  const clientId = assertionIssuer(form.client_assertion)
  if (form.client_id !== undefined && form.client_id !== clientId) throw clientAuthFailed("client_id differs from the client_assertion's iss", form.client_id)
  return {
    clientId,
    clientSecret: undefined,
    assertion: {value: form.client_assertion, audiences: [audience.issuer, `${audience.issuer}${audience.path}`]},
    address: clientAddress(c),
  }
}

/** The token endpoint, revocation (RFC 7009), introspection (RFC 7662) and the metadata document (RFC 8414). */
export function tokenRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  const {db, reader, clock, metrics} = ctx.deps

  app.openapi(metadataRoute, async (c) =>
    jsonResponse(c, authorizationServerMetadata(ctx.issuerOf(c), {registration: await registrationEnabled(narrow(ctx.deps.reader), ctx.deps.clock.now())}), 200, {
      'Cache-Control': 'public, max-age=3600',
    }),
  )

  app.on('POST', [TOKEN_PATH, PAR_PATH], async (c, next) => {
    if (!/^application\/x-www-form-urlencoded\b/i.test(requestHeader(c, 'content-type') ?? '')) {
      throw new AppError('invalid_request', 'the body must be application/x-www-form-urlencoded')
    }
    await next()
  })

  app.openapi(tokenRoute, async (c) => {
    const {answer, headers} = await grant(c, c.req.valid('form'))
    return jsonResponse(c, answer, 200, headers)
  })

  const grant = async (c: Context, form: z.infer<typeof tokenForm>) => {
    if (!form.grant_type) throw new AppError('invalid_request', 'grant_type is required')
    const flow = GRANT_FLOWS.get(form.grant_type)
    if (!flow) throw new AppError('unsupported_grant_type', `grant_type ${JSON.stringify(form.grant_type.slice(0, 64))} is not supported`)
    const now = clock.now()
    const issuer = ctx.issuerOf(c)
    const dpopJkt = await presentedProof(ctx, c, issuer, TOKEN_PATH, now)
    const authenticate = () => requireTokenClient(ctx.deps, clientCredentials(c, form, {issuer, path: TOKEN_PATH}, metrics), dpopJkt, now)
    const answer = await flow.exchange({db, reader, keys: ctx.deps.keys, form: grantParameters(flow, form), authenticate, dpopJkt, issuer, now, metrics})
    metrics?.of(signonMetrics).tokensIssued[flow.grantType]?.inc()
    // The nonce for the client's next proof, so it need not be refused once to learn it.
    return {answer, headers: dpopJkt === null ? NO_STORE : {...NO_STORE, 'DPoP-Nonce': currentNonce(ctx.deps.keys, now)}}
  }

  app.openapi(parRoute, async (c) => {
    const form = c.req.valid('form')
    const now = clock.now()
    const issuer = ctx.issuerOf(c)
    // RFC 9449 §10.1: a proof with the push binds the code to its key.
    const proofJkt = await presentedProof(ctx, c, issuer, PAR_PATH, now)
    const credentials = clientCredentials(c, form, {issuer, path: PAR_PATH}, metrics)
    return jsonResponse(c, await pushAuthorizationRequest(ctx.deps, credentials, form, now, proofJkt), 201, NO_STORE)
  })

  app.openapi(revokeRoute, async (c) => {
    const form = c.req.valid('form')
    const now = clock.now()
    const issuer = ctx.issuerOf(c)
    // A refresh token bound to a DPoP key is revoked only with a proof of it, checked as at the token endpoint.
    const proofJkt = await presentedProof(ctx, c, issuer, REVOKE_PATH, now)
    await revoke(ctx.deps, clientCredentials(c, form, {issuer, path: REVOKE_PATH}, metrics), form.token, now, proofJkt)
    // RFC 7009 lets the body be anything; an empty JSON object is what every client library parses.
    return jsonResponse(c, {}, 200, NO_STORE)
  })

  // Resource servers introspect on every request they receive. The usual request (a URL-encoded
  // form the route's schema accepts) is checked and answered here; anything else goes on to the
  // route below, whose validators answer it as before (bench:introspect, docs/benchmarks.md).
  app.on('POST', '/oauth/introspect', async (c, next) => {
    const form = checkedForm(c, introspectForm)
    if (!form) return next()
    return introspection(c, form)
  })
  const introspection = async (c: Context, form: z.infer<typeof introspectForm>) => {
    const credentials = clientCredentials(c, form, {issuer: ctx.issuerOf(c), path: INTROSPECT_PATH}, metrics)
    return jsonResponse(c, await introspect(ctx.deps, credentials, form.token, clock.now(), form.token_type_hint), 200, NO_STORE)
  }
  app.openapi(introspectRoute, async (c) => introspection(c, c.req.valid('form')))
}
