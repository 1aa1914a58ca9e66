import {OpenAPIHono} from '@hono/zod-openapi'
import {MEDPANEL_VERSION} from './version.js'
import type {Context, MiddlewareHandler} from 'hono'
import type {AppDeps, Readiness, ServedInterface} from './deps.js'
import {AppError} from './errors.js'
import {httpVariables} from './http/env.js'
import {accessLog, matchedRoute, stderrLog} from './http/access-log.js'
import {createLogger, type Logger} from './lib/log.js'
import {printable} from './lib/printable.js'
import {config} from './config.js'
import {forwardedFor} from './http/client-address.js'
import {hostCheck, serviceOrigin} from './http/allowed-hosts.js'
import {renderMessage, toAppError} from './http/error-shape.js'
import {schemaHook} from './http/validation.js'
import {PrefixSplitRouter} from './http/router.js'
import {signonInterface} from './interfaces/signon/routes/index.js'
import type {SignonSettings} from './interfaces/signon/routes/context.js'
import {balanceInterface} from './interfaces/balance/routes.js'
import {conversationsInterface} from './interfaces/conversations/routes.js'
import type {ConversationSettings} from './interfaces/conversations/limits.js'
import {pulseInterface} from './interfaces/pulse/routes.js'
import {swaggerUiRoutes} from './http/swagger-ui.js'
import {homePage} from './home.js'
import {registerPartnerWebhooks} from './interfaces/partner/openapi.js'
import {methodNotAllowed} from './http/method-not-allowed.js'
import {storeMetrics} from './instrument.js'
import type {Metrics} from './metrics/metrics.js'
import {metricsEndpoint} from './http/metrics-endpoint.js'
import {httpMetrics, type InterfaceLabel} from './http/metrics.js'
import {pageHeaders} from './http/page-headers.js'
import {jsonResponse} from './http/fast.js'
import {PROBE_PATHS} from './http/probes.js'
import {type FrontDoor, frontDoor} from './http/front-door.js'

export const SERVICE_VERSION = MEDPANEL_VERSION

/**
 * The interfaces `serve` answers, mounted in this order. A new interface describes itself beside
 * its routes (a ServedInterface) and is added here; its tables and migrations go in src/schema.ts.
 */
export const SERVED_INTERFACES: readonly ServedInterface<InterfaceSettings>[] = [signonInterface, balanceInterface, conversationsInterface, pulseInterface]

const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

/**
 * The interface a request is for, from its route template or, when no route matched, its path:
 * the `interface` of a JSON access-log line. Null for the service's own pages (/, the probes /livez,
 * /readyz and /healthz, /docs).
 */
function interfaceResolver(served: readonly ServedInterface<InterfaceSettings>[]): (path: string) => Exclude<InterfaceLabel, 'other'> | null {
  return (path) => served.find((one) => one.prefixes.some((prefix) => under(path, prefix)))?.label ?? null
}

/** "a, b and c", first letter capitalised: the interfaces as the OpenAPI description lists them. */
function listed(served: readonly ServedInterface<InterfaceSettings>[]): string {
  const titles = [...served].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)).map((one) => one.title)
  const text = titles.length > 1 ? `${titles.slice(0, -1).join(', ')} and ${titles.at(-1)}` : (titles[0] ?? '')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/**
 * What the app is given: the settings every interface shares (AppDeps) and each interface's own,
 * composed here, once, from the types the interfaces declare in their folders.
 */
export type AppSettings = AppDeps & InterfaceSettings

/** The settings of the interfaces that declare their own. */
export type InterfaceSettings = SignonSettings & ConversationSettings

/**
 * The whole HTTP service: middleware, one route group per interface, and the single place where
 * errors become responses. `served` is SERVED_INTERFACES but for tests that add one.
 */
export function createApp(deps: AppSettings, served: readonly ServedInterface<InterfaceSettings>[] = SERVED_INTERFACES): OpenAPIHono {
  // One logger for the app and every interface (src/compose.ts builds it; tests pass a sink).
  const logger = deps.logger ?? createLogger(deps.log ?? stderrLog, deps.logFormat)
  const interfaceOf = interfaceResolver(served)
  const ownRouters = served.filter((one) => one.ownRouter).flatMap((one) => one.prefixes)
  const app = new OpenAPIHono({defaultHook: schemaHook(), router: new PrefixSplitRouter(ownRouters)})
  const {store, metrics: metricsSetting, ...shared} = deps
  const metrics = metricsSetting === false ? undefined : typeof metricsSetting === 'object' ? metricsSetting : storeMetrics(store, deps.clock)

  const logRequests = accessLog(logger.write, {format: logger.format, interfaceOf})
  const metricLabel = (template: string): InterfaceLabel => interfaceOf(template) ?? 'other'
  // The HTTP metrics wrap the access log in its layer rather than adding one (src/http/metrics.ts).
  app.use(metrics ? httpMetrics(metrics, metricLabel, logRequests) : logRequests)
  if (deps.trustProxy && deps.trustProxy.length > 0) app.use(forwardedFor(deps.trustProxy))
  // Before any route: a request for a host that is not the service's is answered 421 and logged.
  if (deps.allowedHosts) app.use(hostCheck(deps.allowedHosts))
  // Before any route too: while the service is starting, nothing but the probes and /metrics answers.
  if (deps.readiness) app.use(startupGate(deps.readiness))
  // The home page and sign-on's pages answer with HTML.
  for (const path of ['/', ...served.flatMap((one) => one.pagePaths ?? [])]) app.use(path, pageHeaders())

  serviceRoutes(app, deps, metrics)
  // The store's parts by name; its keys are read when a route first needs them.
  const routeDeps = {
    ...shared,
    db: store.db,
    reader: store.reader,
    get keys() {
      return store.keys
    },
    logger,
    metrics,
  }
  for (const one of served) app.route('/', one.routes(routeDeps))
  const front = frontDoor({
    routes: served.flatMap((one) => one.front?.(routeDeps) ?? []),
    write: logger.write,
    format: logger.format,
    interfaceOf,
    metrics,
    label: metricLabel,
    readiness: deps.readiness,
    allowedHosts: deps.allowedHosts,
    trustProxy: deps.trustProxy,
  })
  if (front) frontDoors.set(app, front)
  registerPartnerWebhooks(app)
  app.doc31('/openapi.json', openApiHead(served))
  app.get('/', (c) => c.html(homePage(serviceOrigin(deps.baseUrl, c), deps.demo === true, deps.clock.now()), 200, {'Cache-Control': 'no-store'}))
  swaggerUiRoutes(app)
  answerErrors(app, logger, interfaceOf)
  return app
}

const frontDoors = new WeakMap<object, FrontDoor>()

/**
 * The app's front door (http/front-door.ts): what `serve`'s server asks first with each request
 * on Node; undefined when the app has none (no front routes, or no allowed hosts).
 */
export function frontDoorOf(app: object): FrontDoor | undefined {
  return frontDoors.get(app)
}

/** The start-up refusal: expected, and said by its access-log line, so it logs no error line. */
class StillStarting extends AppError {}

/**
 * While the service starts (serve --demo seeding its data set), every request but the probes and
 * /metrics is refused with 503 and Retry-After: a sign-in before the demo member exists would be
 * answered 401, a withdrawal before the seed's credits would land under them. Only while starting:
 * a stopping service still serves requests on connections opened before the signal (the drain).
 */
function startupGate(readiness: Readiness): MiddlewareHandler {
  // Not an async function: no extra promise on every request once the service is ready.
  return function refuseWhileStarting(c, next) {
    if (readiness.phase !== 'starting' || PROBE_PATHS.has(c.req.path) || c.req.path === '/metrics') return next()
    throw new StillStarting('unavailable', `medpanel is starting (${readiness.reason}); try again in a moment`, {headers: {'Retry-After': '1'}})
  }
}

/** The service's own endpoints besides the interfaces: the probes and, with metrics on, /metrics. */
function serviceRoutes(app: OpenAPIHono, deps: AppSettings, metrics: Metrics | undefined): void {
  // Alive: the process runs and its event loop answers. Nothing else is asked (not the store),
  // so a store that is slow or down never gets the process restarted for it.
  app.get('/livez', (c) => jsonResponse(c, {status: 'alive'}, 200, {'Cache-Control': 'no-store'}))
  // Ready: the store answers, migrations ran (openStore did them) and, under --demo, the demo
  // data and its credentials exist. A load balancer or a test script can trust a 200.
  const ready = async (c: Context) => {
    const readiness = deps.readiness
    if (readiness && readiness.phase !== 'ready') {
      return jsonResponse(c, {status: readiness.phase, reason: readiness.reason, version: SERVICE_VERSION}, 503, {'Retry-After': '1', 'Cache-Control': 'no-store'})
    }
    await deps.store.db.selectFrom('settings').select('key').limit(1).execute()
    return jsonResponse(c, {status: 'ok', version: SERVICE_VERSION}, 200, {'Cache-Control': 'no-store'})
  }
  app.get('/readyz', ready)
  app.get('/healthz', ready)
  if (metrics) {
    app.get('/metrics', metricsEndpoint(metrics, deps.metricsToken))
    app.all('/metrics', methodNotAllowed('GET'))
  }
}

/** The head of /openapi.json: what the service is, and the rule for methods it does not list. */
function openApiHead(served: readonly ServedInterface<InterfaceSettings>[]) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'medpanel',
      version: SERVICE_VERSION,
      description: [
        `${listed(served)}.`,
        '',
        'A method this document does not list for a path is answered 405 Method Not Allowed, with an `Allow` header naming the methods the path serves (HEAD goes with GET), once the caller has authenticated where the path requires it (C and D check credentials first), in the error shape of the interface the path belongs to: `{"error", "error_description"}` for sign-on\'s API endpoints and interface D, an HTML page for the sign-in, consent, applications and logout pages, `{"message"}` for C, and E\'s own error document for E.',
      ].join('\n'),
      license: {name: 'Proprietary'},
    },
    // Relative: the document describes whichever medpanel serves it, at that address.
    servers: [{url: '/', description: 'this medpanel'}],
  }
}

/** The one place where anything thrown, or no route matched, becomes an answer in the interface's shape. */
function answerErrors(app: OpenAPIHono, logger: Logger, interfaceOf: (path: string) => string | null): void {
  app.notFound((c) => {
    const render = httpVariables(c).get('renderError') ?? renderMessage
    return render(c, new AppError('not_found', `no route for ${c.req.method} ${c.req.path}`))
  })

  app.onError((error, c) => {
    const appError = toAppError(error)
    if (appError.status >= 500 && !(error instanceof StillStarting)) {
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
      const id = httpVariables(c).get('requestId') ?? '-'
      const route = matchedRoute(c)
      logger.log('error', `error id=${id} ${c.req.method} ${c.req.path}: ${detail}`, 'request failed', {
        request_id: id,
        interface: interfaceOf(route ?? c.req.path),
        route,
        method: c.req.method,
        path: c.req.path,
        error: detail,
      })
    }
    if (appError.logged) logRefusal(logger, c, appError, interfaceOf)
    const render = httpVariables(c).get('renderError') ?? renderMessage
    return render(c, appError)
  })
}

/**
 * A refusal whose answer keeps its reason from the caller: the reason goes to the operator's log,
 * on its own line with the request id (the answer's X-Request-Id), so the two can be matched.
 */
function logRefusal(logger: Logger, c: Context, error: AppError, interfaceOf: (path: string) => string | null): void {
  const id = httpVariables(c).get('requestId') ?? '-'
  const route = matchedRoute(c)
  // The reason may quote the request (a client_id): kept on its line and bounded.
  const kept = (text: string) => printable(text).slice(0, config.http.loggedReasonMaxChars)
  const reason = kept(error.logged!.reason)
  const fields = Object.fromEntries(Object.entries(error.logged!.fields ?? {}).map(([name, value]) => [name, kept(value)]))
  const named = Object.entries(fields).map(([name, value]) => ` ${name}=${value}`)
  logger.log('warn', `refused id=${id} ${c.req.method} ${route ?? '-'} ${error.code}${named.join('')}: ${reason}`, 'request refused', {
    request_id: id,
    interface: interfaceOf(route ?? c.req.path),
    route,
    method: c.req.method,
    error: error.code,
    ...fields,
    reason,
  })
}
