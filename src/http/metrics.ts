import type {MiddlewareHandler} from 'hono'
import {matchedRoute} from './access-log.js'
import type {InterfaceLabel, Metrics} from '../metrics/metrics.js'

export type {InterfaceLabel}

/** What a request is counted under when no route of the app matched it (a 404). */
const UNMATCHED = 'unmatched'

/**
 * Counts every answer by interface, route template and status class, and times it: from before
 * `inner` (the access log) starts to after it has finished, in the same middleware layer. Every
 * layer costs the hot routes a share of their throughput (see http/guards.ts), so this one adds
 * none: it wraps the layer that is there anyway. The route is the template Hono matched, the one
 * the access log names (`/balance/:key/:id/withdrawals`, never the path asked for), so a label has
 * as many values as the app has routes, whatever callers send; a request a guard refused is
 * counted under the route it was going to. Afterwards it looks the route's series up by template
 * and adds to its plain numbers (metrics.ts RouteSeries).
 */
export function httpMetrics(metrics: Metrics, label: (template: string) => InterfaceLabel, inner: MiddlewareHandler): MiddlewareHandler {
  return function countRequest(c, next) {
    const started = performance.now()
    return inner(c, next).then((response) => {
      metrics.route(matchedRoute(c) ?? UNMATCHED, label).record(c.res.status, (performance.now() - started) / 1000)
      return response
    })
  }
}
