import {Hono} from 'hono'
import {describe, expect, it} from 'vitest'
import {AppError, codeOfStatus, ERROR_CODES, type ErrorCode, isOAuthCode} from '../../src/errors.js'
import type {LiveToken} from '../../src/grants/service.js'
import {apiKey} from '../../src/http/api-key.js'
import {basicClientAuth} from '../../src/http/basic-auth.js'
import {bearerToken, type BearerTokenOptions} from '../../src/http/bearer-auth.js'
import type {TokenEnv} from '../../src/http/env.js'
import {type ErrorRenderer, errorShape, renderMessage, toAppError} from '../../src/http/error-shape.js'
import {renderOAuthError} from '../../src/http/oauth-error.js'
import {basicAuth} from '../helpers/http-basic.js'

/*
 * The one authentication contract: every factory's refusal is a thrown AppError that carries its
 * challenge as data, and the error shape is the one place that writes the answer, WWW-Authenticate
 * included. And the one table every code and status lookup is read from. Expected values are
 * written out here, from the specs, never read back from the code under test.
 */

/** Each code's status as RFC 6749 §5.2, RFC 6750 §3.1, OpenID Connect Core §3.1.2.6, RFC 9449, RFC 8707 and RFC 9110 say. */
const SPEC_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  invalid_token: 401,
  insufficient_scope: 403,
  unsupported_token_type: 400,
  invalid_target: 400,
  login_required: 400,
  consent_required: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  // RFC 9449 §5 and §8: at the token endpoint; a resource answers them 401 (§7.1, §9)
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  // RFC 7591 §3.2.2
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  unavailable: 503,
}

const OAUTH = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'access_denied',
  'invalid_token',
  'insufficient_scope',
  'unsupported_token_type',
  'invalid_target',
  'login_required',
  'consent_required',
  'request_not_supported',
  'request_uri_not_supported',
  'invalid_dpop_proof',
  'use_dpop_nonce',
  'invalid_redirect_uri',
  'invalid_client_metadata',
]

describe('the one code table', () => {
  it('gives each code the status its spec names', () => {
    expect(Object.keys(ERROR_CODES).sort()).toEqual(Object.keys(SPEC_STATUS).sort())
    for (const [code, status] of Object.entries(SPEC_STATUS)) expect([code, new AppError(code as ErrorCode, 'x').status]).toEqual([code, status])
  })

  it("names exactly OAuth's own codes as OAuth codes", () => {
    expect(Object.keys(SPEC_STATUS).filter((code) => isOAuthCode(code as ErrorCode))).toEqual(OAUTH)
  })

  it('reads a bare status back as its generic code, and a status no code has as none', () => {
    const expected: Record<number, string> = {
      400: 'bad_request',
      401: 'unauthorized',
      402: 'payment_required',
      403: 'forbidden',
      404: 'not_found',
      405: 'method_not_allowed',
      406: 'not_acceptable',
      409: 'conflict',
      413: 'payload_too_large',
      415: 'unsupported_media_type',
      422: 'unprocessable',
      429: 'too_many_requests',
      500: 'internal',
      503: 'unavailable',
    }
    for (const [status, code] of Object.entries(expected)) expect([status, codeOfStatus(Number(status))]).toEqual([status, code])
    for (const status of [200, 410, 418, 421, 502]) expect(codeOfStatus(status)).toBeUndefined()
  })

  it('turns a bare HTTP status from Hono into the generic code, keeping the status', async () => {
    const {HTTPException} = await import('hono/http-exception')
    const error = toAppError(new HTTPException(413, {message: 'too big'}))
    expect([error.code, error.status, error.message]).toEqual(['payload_too_large', 413, 'too big'])
    expect(toAppError(new HTTPException(418)).code).toBe('bad_request')
    expect(toAppError(new HTTPException(502)).code).toBe('internal')
  })
})

/** An app that answers as createApp's onError does: the route's renderer, or `{message}`. */
function appWith(setup: (app: Hono<TokenEnv>) => void): Hono<TokenEnv> {
  const app = new Hono<TokenEnv>()
  setup(app)
  app.onError((error, c) => (c.get('renderError') ?? renderMessage)(c, toAppError(error)))
  return app
}

/** A renderer that records what it was given before rendering as `{message}`. */
function recording(): {render: ErrorRenderer; seen: AppError[]} {
  const seen: AppError[] = []
  const render: ErrorRenderer = (c, error) => {
    seen.push(error)
    return renderMessage(c, error)
  }
  return {seen, render}
}

async function answer(app: Hono<TokenEnv>, path: string, headers: Record<string, string> = {}) {
  const res = await app.request(path, {headers})
  return {status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.json()}
}

const basicHeader = (user: string, password: string) => ({authorization: basicAuth(user, password)})

describe('basicClientAuth', () => {
  const refused = (reason: string) => new AppError('unauthorized', reason, {challenge: {scheme: 'Basic', realm: 'test realm'}})
  const seen = recording()
  const app = appWith((app) => {
    app.use(
      '/basic',
      errorShape(seen.render),
      basicClientAuth({
        missing: () => refused('send credentials'),
        async verify({username, password}) {
          if (password !== 'right') throw refused(`wrong password for ${username}`)
          if (username === 'busy') throw new AppError('unavailable', 'the store is busy', {headers: {'Retry-After': '1'}})
          return username
        },
        accept: (c, user) => c.header('x-user', user),
      }),
    )
    app.get('/basic', (c) => c.json({ok: true}))
  })

  it('refuses a request without credentials through the renderer, with the Basic challenge', async () => {
    expect(await answer(app, '/basic')).toEqual({status: 401, challenge: 'Basic realm="test realm", charset="UTF-8"', body: {message: 'send credentials'}})
    expect(await answer(app, '/basic', {authorization: 'Basic !!!'})).toMatchObject({status: 401, body: {message: 'send credentials'}})
    expect(seen.seen.at(-1)?.challenge).toEqual({scheme: 'Basic', realm: 'test realm'})
  })

  it("answers verify's refusal as thrown, challenge and all, and passes other failures on untouched", async () => {
    expect(await answer(app, '/basic', basicHeader('ann', 'wrong'))).toEqual({
      status: 401,
      challenge: 'Basic realm="test realm", charset="UTF-8"',
      body: {message: 'wrong password for ann'},
    })
    const busy = await app.request('/basic', {headers: basicHeader('busy', 'right')})
    expect([busy.status, busy.headers.get('retry-after'), busy.headers.get('www-authenticate')]).toEqual([503, '1', null])
    const ok = await app.request('/basic', {headers: basicHeader('ann', 'right')})
    expect([ok.status, ok.headers.get('x-user')]).toEqual([200, 'ann'])
  })
})

describe('apiKey', () => {
  const app = appWith((app) => {
    app.use(
      '/key',
      apiKey({
        header: 'X-Key',
        missing: () => new AppError('unauthorized', 'a key is required'),
        async verify(key) {
          if (key !== 'k1') throw new AppError('forbidden', 'this key may not call this')
          return key
        },
        accept: (c, key) => c.header('x-granted', key),
      }),
    )
    app.get('/key', (c) => c.json({ok: true}))
  })

  it('refuses through the renderer: a missing key with missing(), a wrong one as verify threw it', async () => {
    expect(await answer(app, '/key')).toEqual({status: 401, challenge: null, body: {message: 'a key is required'}})
    expect(await answer(app, '/key', {'x-key': '  '})).toEqual({status: 401, challenge: null, body: {message: 'a key is required'}})
    expect(await answer(app, '/key', {'x-key': 'k2'})).toEqual({status: 403, challenge: null, body: {message: 'this key may not call this'}})
    const ok = await app.request('/key', {headers: {'x-key': 'k1'}})
    expect([ok.status, ok.headers.get('x-granted')]).toEqual([200, 'k1'])
  })
})

describe('bearerToken', () => {
  const live = {clientId: 'c', memberId: null, scopes: [], clientGrants: []} as unknown as LiveToken
  const presentations: unknown[] = []
  const verify: BearerTokenOptions['verify'] = async (presented) => {
    presentations.push(presented)
    const {token} = presented
    if (token === 'good') return live
    if (token === 'broken') throw new Error('the store went away')
    throw new AppError('invalid_token', 'The access token expired', {challenge: {scheme: 'Bearer', error: 'invalid_token'}})
  }
  const seen = recording()
  const app = appWith((app) => {
    const origin = () => 'https://panel.example'
    app.use('/own', errorShape(renderOAuthError), bearerToken({verify, origin}))
    app.use('/as-request', errorShape(renderOAuthError), bearerToken({verify, origin, answerAs: 'invalid_request'}))
    app.use('/as-token', errorShape(renderOAuthError), bearerToken({verify, origin, answerAs: 'invalid_token'}))
    app.use('/message', errorShape(seen.render), bearerToken({verify, origin}))
    for (const path of ['/own', '/as-request', '/as-token', '/message']) app.get(path, (c) => c.json({client: c.get('token').clientId}))
  })
  const auth = (token: string) => ({authorization: `Bearer ${token}`})
  const missing = 'Bearer realm="medpanel", error="invalid_request", error_description="An access token is required in the Authorization header"'
  const dead = 'Bearer realm="medpanel", error="invalid_token", error_description="The access token expired"'

  it('names in the body the code its challenge names, unless the route answers as one code', async () => {
    expect(await answer(app, '/own')).toMatchObject({status: 401, challenge: missing, body: {error: 'invalid_request'}})
    expect(await answer(app, '/own', auth('old'))).toMatchObject({status: 401, challenge: dead, body: {error: 'invalid_token', error_description: 'The access token expired'}})
    expect(await answer(app, '/as-request', auth('old'))).toMatchObject({status: 401, challenge: dead, body: {error: 'invalid_request'}})
    expect(await answer(app, '/as-token')).toMatchObject({status: 401, challenge: missing, body: {error: 'invalid_token'}})
    expect(await answer(app, '/as-token', auth('old'))).toMatchObject({status: 401, challenge: dead, body: {error: 'invalid_token'}})
  })

  it('hands verify the scheme, the DPoP proof and the URL a proof must name (the service origin, no query)', async () => {
    presentations.length = 0
    await app.request('/own?x=1', {headers: {authorization: 'Bearer good'}})
    await app.request('/own?x=1', {headers: {authorization: 'dpop good', dpop: 'a.proof.jwt'}})
    expect(presentations).toEqual([
      {token: 'good', scheme: 'Bearer', proof: undefined, htm: 'GET', htu: 'https://panel.example/own'},
      {token: 'good', scheme: 'DPoP', proof: 'a.proof.jwt', htm: 'GET', htu: 'https://panel.example/own'},
    ])
  })

  it('refuses a token in the query or a malformed header, and passes a store failure on as a 500', async () => {
    expect(await answer(app, '/own?access_token=good')).toMatchObject({status: 401, body: {error_description: 'The access token must be sent in the Authorization header'}})
    expect(await answer(app, '/own', {authorization: 'Token good'})).toMatchObject({
      status: 401,
      challenge:
        'Bearer realm="medpanel", error="invalid_request", error_description="The Authorization header must be Bearer <access token> (or DPoP <access token> with a DPoP proof)"',
    })
    expect(await answer(app, '/as-request', auth('broken'))).toEqual({status: 500, challenge: null, body: {error: 'server_error', error_description: 'internal server error'}})
    expect(await answer(app, '/own', auth('good'))).toEqual({status: 200, challenge: null, body: {client: 'c'}})
  })

  it("goes through the route's renderer, which writes the challenge from the error", async () => {
    expect(await answer(app, '/message', auth('old'))).toEqual({status: 401, challenge: dead, body: {message: 'The access token expired'}})
    expect(seen.seen.at(-1)).toMatchObject({code: 'invalid_token', challenge: {scheme: 'Bearer', error: 'invalid_token'}, headers: {}})
  })
})

describe('the OAuth renderer', () => {
  const app = appWith((app) => {
    app.use('/oauth/*', errorShape(renderOAuthError))
    app.get('/oauth/:code', (c) => {
      throw new AppError(c.req.param('code') as ErrorCode, 'why')
    })
  })

  it('names OAuth codes as they are and any other code by its status class', async () => {
    expect(await answer(app, '/oauth/invalid_grant')).toEqual({status: 400, challenge: null, body: {error: 'invalid_grant', error_description: 'why'}})
    expect(await answer(app, '/oauth/not_found')).toEqual({status: 404, challenge: null, body: {error: 'invalid_request', error_description: 'why'}})
    expect(await answer(app, '/oauth/unavailable')).toMatchObject({status: 503, body: {error: 'temporarily_unavailable'}})
    expect(await answer(app, '/oauth/internal')).toMatchObject({status: 500, body: {error: 'server_error'}})
  })

  it('challenges a client that sent Authorization and was refused as invalid_client, and only then', async () => {
    expect(await answer(app, '/oauth/invalid_client', basicHeader('a', 'b'))).toMatchObject({status: 401, challenge: 'Basic realm="medpanel", charset="UTF-8"'})
    expect(await answer(app, '/oauth/invalid_client')).toMatchObject({status: 401, challenge: null})
    expect(await answer(app, '/oauth/invalid_grant', basicHeader('a', 'b'))).toMatchObject({status: 400, challenge: null})
  })
})
