import type {Context, MiddlewareHandler} from 'hono'
import {matchedRoutes} from 'hono/route'
import type {InterfaceLabel, Metrics} from './metrics.js'

export type {InterfaceLabel}

/** What a request is counted under when no route of the app matched it. */
const UNMATCHED = 'unmatched'

/**
 * The route template a request was served by: the path of the route that answered, as registered
 * (`/balance/:key/:id/withdrawals`, never the path that was asked for), so that a label has as many
 * values as the app has routes, whatever callers send. Middleware mounted on a wildcard (`*`,
 * `/balance/*`) is no route of its own: a request that a guard refused there is counted under the
 * route it was going to, and one that only wildcards matched is `unmatched` (a 404).
 */
export function routeTemplate(c: Context): string {
  const routes = matchedRoutes(c)
  const answered = routes[c.req.routeIndex]?.path
  if (answered !== undefined && !answered.includes('*')) return answered
  for (let i = routes.length - 1; i >= 0; i--) {
    const path = routes[i]!.path
    if (!path.includes('*')) return path
  }
  return UNMATCHED
}

/**
 * Counts every answer by interface, route template and status class, and times it: from before
 * `inner` (the access log) starts to after it has finished, in the same middleware layer. Every
 * layer costs the hot routes a share of their throughput (see http/guards.ts), so this one adds
 * none: it wraps the layer that is there anyway. Afterwards it looks the route's series up by
 * template and adds to its plain numbers (metrics.ts RouteSeries); nothing is built per request
 * but the matched-route list Hono hands out.
 */
export function httpMetrics(metrics: Metrics, interfaces: ReadonlyMap<string, InterfaceLabel>, inner: MiddlewareHandler): MiddlewareHandler {
  return function countRequest(c, next) {
    const started = performance.now()
    return inner(c, next).then((response) => {
      metrics.route(routeTemplate(c), interfaces).record(c.res.status, (performance.now() - started) / 1000)
      return response
    })
  }
}

/** Records which interface each of a sub-app's routes belongs to, before it is mounted at `/`. */
export function labelRoutes(interfaces: Map<string, InterfaceLabel>, label: InterfaceLabel, app: {routes: readonly {path: string}[]}): void {
  for (const route of app.routes) if (!route.path.includes('*')) interfaces.set(route.path, label)
}
