import {Hono, type Context, type MiddlewareHandler} from 'hono'
import type {Kysely} from 'kysely'
import {AppError} from '../../../errors.js'
import {accessLog, stderrLog} from '../../../http/access-log.js'
import {createLogger, type LogFormat} from '../../../lib/log.js'
import {basicClientAuth} from '../../../http/basic-auth.js'
import {errorHeaders, toAppError} from '../../../http/error-shape.js'
import {safeEqual} from '../../../lib/hashing.js'
import type {Clock} from '../../../lib/clock.js'
import * as svc from './service.js'
import {receiverTransaction} from './store.js'
import type {ReceiverDatabase} from './tables.js'
import type {HttpEnv} from '../../../http/env.js'
import {jsonResponse, requestHeader} from '../../../http/fast.js'
import {signatureProblem} from '../signatures.js'

export interface ReceiverOptions {
  db: Kysely<ReceiverDatabase>
  username: string
  password: string
  clock: Clock
  log?: (line: string) => void
  /** The shape of the log lines (partner-serve --log-format); text unless told. */
  logFormat?: LogFormat
  /** The key of the client's signing secret (partner-serve --signing-secret): every write must then be signed with it. */
  signingKey?: Uint8Array
}

/** HTTP Basic with the agreed pair; anything else is 401 (the spec's one fixed partner rule). */
export function partnerBasicAuth(username: string, password: string): MiddlewareHandler {
  const expected = `${username}:${password}`
  const refused = () => new AppError('unauthorized', 'valid HTTP Basic credentials are required', {challenge: {scheme: 'Basic', realm: 'partner'}})
  return basicClientAuth({
    missing: refused,
    async verify(given) {
      if (!safeEqual(`${given.username}:${given.password}`, expected)) throw refused()
      return true
    },
  })
}

/**
 * Writes must carry signatures made with `key` at a time near this partner's clock; anything
 * else is refused with 400 before it is recorded or applied. Reads are the partner's own
 * troubleshooting calls and go unsigned.
 */
export function signedWrites(key: Uint8Array, clock: Clock): MiddlewareHandler {
  return async function checkSignatures(c, next) {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const problem = signatureProblem(key, (name) => requestHeader(c, name), await c.req.text(), Math.floor(clock.now().getTime() / 1000))
      if (problem) throw new AppError('bad_request', problem)
    }
    await next()
  }
}

async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json()
  } catch {
    throw new AppError('bad_request', 'body: must be JSON')
  }
}

/**
 * The reference partner: every endpoint of interface B under /v1. Quota-scoped paths accept both
 * the plural `quotas` and the singular `quota` segment, since the spec uses both.
 */
export function receiverApp(options: ReceiverOptions): Hono<HttpEnv> {
  const {db, clock} = options
  const logger = createLogger(options.log ?? stderrLog, options.logFormat)
  const app = new Hono<HttpEnv>()
  const now = () => clock.now().toISOString()
  const delivery = (c: Context) => requestHeader(c, 'x-medpanel-delivery') || undefined

  // A delivery's X-Request-Id (the medpanel command or request that queued it) becomes this
  // request's id: the partner's log line carries the same id as medpanel's.
  app.use(accessLog(logger.write, {format: logger.format, interfaceOf: (path) => (path === '/v1' || path.startsWith('/v1/') ? 'B' : null)}))
  app.get('/healthz', (c) => jsonResponse(c, {status: 'ok'}, 200))
  app.use('/v1/*', partnerBasicAuth(options.username, options.password))
  if (options.signingKey) app.use('/v1/*', signedWrites(options.signingKey, clock))
  app.use('/v1/*', async function logWrite(c, next) {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      await receiverTransaction(db, (trx) =>
        trx
          .insertInto('received_requests')
          .values({method: c.req.method, path: c.req.path, delivery_id: delivery(c) ?? null, received_at: now()})
          .execute(),
      )
    }
    await next()
  })

  const project = '/v1/projects/:p'
  const quota = `${project}/:seg{quotas?}/:q`
  app.get(project, async (c) => jsonResponse(c, await svc.getProject(db, c.req.param('p')), 200))
  app.put(project, async (c) => jsonResponse(c, await svc.putProject(db, c.req.param('p'), await jsonBody(c), delivery(c), now()), 200))
  app.get(`${project}/quotas`, async (c) => jsonResponse(c, await svc.listQuotas(db, c.req.param('p')), 200))
  app.get(quota, async (c) => jsonResponse(c, await svc.getQuota(db, c.req.param('p'), c.req.param('q')), 200))
  app.put(quota, async (c) => jsonResponse(c, await svc.putQuota(db, c.req.param('p'), c.req.param('q'), await jsonBody(c), delivery(c), now()), 200))
  app.get(`${quota}/members`, async (c) => jsonResponse(c, await svc.listMembers(db, c.req.param('p'), c.req.param('q')), 200))
  app.put(`${quota}/members`, async (c) => jsonResponse(c, await svc.writeMembers(db, c.req.param('p'), c.req.param('q'), await jsonBody(c), 'replace', delivery(c), now()), 200))
  app.post(`${quota}/members`, async (c) => jsonResponse(c, await svc.writeMembers(db, c.req.param('p'), c.req.param('q'), await jsonBody(c), 'append', delivery(c), now()), 200))
  app.get(`${quota}/members/:npi`, async (c) => jsonResponse(c, await svc.getMember(db, c.req.param('p'), c.req.param('q'), c.req.param('npi')), 200))
  app.put(`${quota}/members/:npi`, async (c) =>
    jsonResponse(c, await svc.putMember(db, c.req.param('p'), c.req.param('q'), c.req.param('npi'), await jsonBody(c), delivery(c), now()), 200),
  )
  app.delete(`${quota}/members/:npi`, async (c) => jsonResponse(c, await svc.deleteMember(db, c.req.param('p'), c.req.param('q'), c.req.param('npi'), delivery(c), now()), 200))
  app.get(`${project}/events`, async (c) => jsonResponse(c, await svc.listEvents(db, c.req.param('p')), 200))
  app.post(`${project}/events`, async (c) => jsonResponse(c, await svc.postEvent(db, c.req.param('p'), await jsonBody(c), delivery(c), now()), 200))

  app.notFound((c) => jsonResponse(c, {message: `no route for ${c.req.method} ${c.req.path}`}, 404))
  app.onError((error, c) => {
    const appError = toAppError(error)
    if (appError.status >= 500) {
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
      logger.log('error', `error ${c.req.method} ${c.req.path}: ${detail}`, 'request failed', {
        request_id: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        error: detail,
      })
    }
    return jsonResponse(c, {message: appError.status >= 500 ? 'internal error' : appError.message}, appError.status as 400, errorHeaders(appError))
  })
  return app
}
