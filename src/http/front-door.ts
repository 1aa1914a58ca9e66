import type {IncomingMessage, ServerResponse} from 'node:http'
import type {InterfaceLabel, Metrics} from '../metrics/metrics.js'
import {type AccessLogOptions, requestIdOf, requestLine} from './access-log.js'
import {allowedAsSpelled} from './allowed-hosts.js'
import {forwardedCaller, socketPeer} from './client-address.js'
import {incomingHeader} from './fast.js'

/*
 * The front door: a hot route's common answer given straight on Node's request, before
 * @hono/node-server builds a Fetch Request for the app and Hono runs its middleware and router.
 * Under load those layers cost token info more than its own work (docs/benchmarks.md,
 * "bench:signon"). A front route answers only what it can answer from memory, only with success,
 * and only for a request the app would answer the same way; everything else (another method, a
 * query, a Host that is not plainly one of the service's, a start not finished, any refusal, a
 * row not remembered) goes to the app as before, which answers it in full. What the app does
 * around every answer is done here the same way: the X-Request-Id, the access-log line (the same
 * `requestLine`, the same sink), the HTTP metrics, and the caller's address behind trusted proxies.
 */

/** A front route's answer: a 200 with a ready body and the headers the app's route would send besides X-Request-Id. */
export interface FrontAnswer {
  body: string
  /** In the order and spelling the app's route writes them (content-type first). */
  headers: Readonly<Record<string, string>>
}

/** A GET the front door may answer: its exact paths, and the answer, or undefined to leave the request to the app. */
export interface FrontRoute {
  /** Exact request targets (no query), each also the route template the app matches for it. */
  paths: readonly string[]
  /** Must not throw, write nor wait: anything it cannot answer at once from memory is undefined. */
  answer(request: IncomingMessage): FrontAnswer | undefined
}

/** Answers a request and says true, or says false and leaves it (untouched) to the app. */
export type FrontDoor = (request: IncomingMessage, response: ServerResponse) => boolean

export interface FrontDoorOptions extends AccessLogOptions {
  routes: readonly FrontRoute[]
  /** The access log's sink (the app's logger's write). */
  write: (line: string) => void
  metrics: Metrics | undefined
  /** The metrics' interface label of a route template (as httpMetrics is given). */
  label: (template: string) => InterfaceLabel
  /** serve's Readiness (deps.ts): nothing is answered while it is starting. */
  readiness: {readonly phase: string} | undefined
  /** The app's allowed hosts; without them there is no front door (the app alone decides what a Host may be). */
  allowedHosts: readonly string[] | undefined
  trustProxy: readonly string[] | undefined
}

/** A Host header as the service's own names spell it: a name or a bracketed IPv6 address, then at most a port. */
const PLAIN_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::([1-9]\d{0,4}))?$/

/** The front door over `routes`, or undefined when there is none to open. */
export function frontDoor(options: FrontDoorOptions): FrontDoor | undefined {
  const {routes, write, metrics, label, readiness, allowedHosts, trustProxy} = options
  if (routes.length === 0 || allowedHosts === undefined) return undefined
  const byPath = new Map<string, FrontRoute>()
  for (const route of routes) for (const path of route.paths) byPath.set(path, route)
  const spelled = allowedAsSpelled(allowedHosts)
  const hostAllowed = (host: string | undefined): boolean => {
    if (host === undefined) return false
    const plain = PLAIN_HOST.exec(host)
    return plain !== null && (plain[1] === undefined || Number(plain[1]) <= 65535) && spelled(host)
  }
  const forwarded = trustProxy && trustProxy.length > 0 ? forwardedCaller(trustProxy) : undefined
  const line = requestLine(options)
  return (request, response) => {
    const url = request.url ?? ''
    const route = request.method === 'GET' ? byPath.get(url) : undefined
    if (route === undefined || readiness?.phase === 'starting' || !hostAllowed(request.headers.host)) return false
    const started = performance.now()
    let answer: FrontAnswer | undefined
    try {
      answer = route.answer(request)
    } catch {
      answer = undefined
    }
    if (answer === undefined) return false
    const id = requestIdOf(incomingHeader(request, 'x-request-id'))
    response.writeHead(200, {'x-request-id': id, ...answer.headers, 'Content-Length': String(Buffer.byteLength(answer.body))})
    response.end(answer.body)
    const peer = socketPeer(request)
    const address = forwarded?.(peer, () => incomingHeader(request, 'x-forwarded-for')) ?? peer
    const ms = performance.now() - started
    write(line({method: 'GET', path: url, route: url, status: 200, ms, id, address}))
    metrics?.route(url, label).record(200, ms / 1000)
    return true
  }
}
