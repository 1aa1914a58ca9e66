import type {SubApp} from './http/env.js'
import type {FrontRoute} from './http/front-door.js'
import type {Clock} from './lib/clock.js'
import type {LogFormat, Logger} from './lib/log.js'
import type {Metrics} from './metrics/metrics.js'
import type {StoreParts} from './store/database.js'

/**
 * What the HTTP app needs from the outside world that every interface may read; tests pass fakes
 * (a ManualClock, a log sink). An interface with settings of its own declares them in its folder
 * as a type of its own (e.g. ConversationSettings), and src/app.ts composes the app's settings
 * from this and those (AppSettings): nothing here names an interface, and nothing adds to it.
 */
export interface AppDeps {
  /** The open store: its connection, the read-only connection plain reads go to, its keys. */
  store: StoreParts
  clock: Clock
  /**
   * Where the service is reachable: the OAuth issuer and every absolute link. `serve` always gives
   * one (--base-url, else the listening address); only an in-process app without it falls back to
   * the request's origin.
   */
  baseUrl?: string
  /**
   * Host names the app answers to (`serve --allowed-host` syntax, see src/http/allowed-hosts.ts);
   * a request for any other host is answered 421. `serve` always gives a list; omitted, any host.
   */
  allowedHosts?: readonly string[]
  /** Receives access-log lines and 5xx details. Omit to write them to stderr. */
  log?: (line: string) => void
  /** The shape of those lines (serve --log-format): readable `text` (the default) or `json`. */
  logFormat?: LogFormat
  /**
   * The logger of those lines, when the caller built it (src/compose.ts); otherwise the app builds
   * it once from `log` and `logFormat` and hands that one to every interface.
   */
  logger?: Logger
  /**
   * Addresses and CIDRs of reverse proxies (serve --trust-proxy): a request whose TCP peer is one
   * of them is counted as coming from the address it forwarded (X-Forwarded-For).
   */
  trustProxy?: readonly string[]
  /** Set by `serve --demo`: mounts the demo callback page. */
  demo?: boolean
  /**
   * Where the service is in its life (see Readiness): `/readyz` and `/healthz` answer 503 with the
   * reason unless it is ready, and while it is starting every other path but /livez and /metrics
   * is answered 503 too. `serve` holds it starting while the demo data set is being seeded, and
   * makes it stopping at the first SIGTERM or SIGINT. Omitted: always ready.
   */
  readiness?: Readiness
  /**
   * Prometheus metrics and GET /metrics (docs/operations.md "Metrics"): on unless false (`serve
   * --no-metrics`), counted in the registry of the store (src/instrument.ts), which every app on
   * that store shares; src/compose.ts hands that registry in itself.
   */
  metrics?: boolean | Metrics
  /**
   * `serve --metrics-token`: /metrics then answers any caller presenting it as a Bearer token, and
   * nobody else. Without one, only callers on loopback.
   */
  metricsToken?: string
}

/**
 * starting: the socket is bound but the service may not be used yet (the demo's data set is not in
 * place), so nothing but the probes answers. ready: everything answers. stopping: the drain after
 * a stop signal; the probes say not ready so that no new traffic is sent, but requests still
 * arriving on connections opened before are served (the drain exists to finish them).
 */
export type ReadinessPhase = 'starting' | 'ready' | 'stopping'

export interface Readiness {
  phase: ReadinessPhase
  /** Why not ready (starting or stopping), for /readyz and /healthz. */
  reason: string
}

/**
 * What an interface's routes are given: the shared settings, the store's parts by name (its
 * connection `db`, its `reader`, its `keys`), the one logger and the one metrics registry the app
 * settled on (undefined with metrics off), and the interface's own settings `S`. A service below
 * a route is handed what it uses (the registry, the reader, the keys, or the route's deps as its
 * StoreParts) by the route: no layer looks any of them up from a connection.
 */
export type RouteDeps<S extends object = object> = Omit<AppDeps, 'metrics' | 'store'> & StoreParts & {logger: Logger; metrics: Metrics | undefined} & S

/**
 * One interface as the app serves it. Each interface describes itself beside its routes, and
 * src/app.ts mounts the list (SERVED_INTERFACES): its routes, its pages' headers, the name logs
 * and metrics give its requests, and its line in the OpenAPI document's description.
 */
export interface ServedInterface<S extends object = object> {
  /** Its letter: the `interface` of access-log lines and HTTP metrics. */
  label: string
  /** How the OpenAPI document's description names it, e.g. "balances (C)". */
  title: string
  /** The paths it answers under: a request under one is counted as this interface's, matched or not. */
  prefixes: readonly string[]
  /** Its paths get a router of their own (interface C's spec paths defeat Hono's fastest router). */
  ownRouter?: boolean
  /** Paths of its HTML pages, which get the page security headers. */
  pagePaths?: readonly string[]
  routes: (deps: RouteDeps<S>) => SubApp
  /**
   * Its hot GETs the front door may answer from memory before the app runs (http/front-door.ts);
   * each must answer exactly as its route in `routes` does, and leave everything else to it.
   */
  front?: (deps: RouteDeps<S>) => FrontRoute[]
}
