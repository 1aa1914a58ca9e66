import type {OpenAPIHono} from '@hono/zod-openapi'
import type {Hono} from 'hono'
import {type AppSettings, createApp, frontDoorOf} from './app.js'
import type {FrontDoor} from './http/front-door.js'
import type {Readiness} from './deps.js'
import {defaultAllowedHosts} from './http/allowed-hosts.js'
import type {HttpEnv} from './http/env.js'
import {type LogFile, logFile, stderrLog} from './http/access-log.js'
import {partnerTransport} from './http/outbound.js'
import {receiverApp} from './interfaces/partner/receiver/routes.js'
import {openReceiverStore, type ReceiverStore} from './interfaces/partner/receiver/store.js'
import {DeliveryWorker} from './interfaces/partner/worker.js'
import {LogoutWorker} from './interfaces/signon/logout-worker.js'
import {storeMetrics} from './instrument.js'
import type {Clock} from './lib/clock.js'
import {createLogger, type LogFormat, type Logger} from './lib/log.js'
import {type ServiceNotifier, serviceNotifier} from './lib/sd-notify.js'
import type {Metrics} from './metrics/metrics.js'
import {setPasswordHashSlots} from './registry/throttle.js'
import {type RunningServer, startServer} from './server.js'
import type {Db, ServiceStore} from './schema.js'
import {printableUrl, type Store} from './store/db.js'
import type {Keyring} from './store/secrets.js'
import {narrow} from './store/database.js'

/**
 * Everything `serve` is told, as plain values: the command turns its flags and environment into
 * these (checking each) and calls compose; nothing here reads a flag or the environment.
 */
export interface ServeSettings {
  /** Opens the store: the command's own opener, which knows which file and what a failed run leaves behind. */
  openStore: () => Promise<Store>
  clock: Clock
  listen: {port: number; host: string}
  /** --base-url's origin; without it the listening address is the issuer. */
  publicBase?: string
  /** --allowed-host entries beside the base URL's host and the listening address. */
  extraHosts: readonly string[]
  trustProxy: readonly string[]
  guessingAllow: readonly string[]
  /** --password-hashes, checked against the thread pool already. */
  passwordHashes?: number
  /** --replica-url, named in a line once the store is open. */
  replicaUrl?: string
  demo: boolean
  metrics: boolean
  metricsToken?: string
  logFormat: LogFormat
  /** --access-log's path; the access log goes to stderr without one. */
  accessLog?: string
  /** Whether the partner delivery and back-channel logout workers run (--no-worker: neither). */
  worker: boolean
  /** systemd's NOTIFY_SOCKET (Type=notify), as the environment gave it; unset outside systemd. */
  notifySocket?: string
}

/** The two outbox workers as serve runs and stops them: side by side, stopped together. */
export interface Workers {
  start(): void
  /** Lets the sends in flight finish and record their outcome. */
  stop(): Promise<void>
  /** Whether a partner delivery is in flight: the one send worth naming when a stop cuts it. */
  delivering(): boolean
}

/** What a running `serve` is made of, each part built once and held here, not looked up. */
export interface ServeProcess {
  store: Store
  clock: Clock
  /** Serve's own lines (start, stop, warnings), straight to stderr in the chosen format. */
  logger: Logger
  /** The access log's and the app's logger (stderr, batched, or --access-log's file). */
  requestLogger: Logger
  accessLog: LogFile | undefined
  /** The store's registry; undefined under --no-metrics. */
  metrics: Metrics | undefined
  /** The store's keys, read at start. */
  keys: Keyring
  /** The store's read-only connection for plain reads (the store itself where there is none). */
  reader: Db
  notifier: ServiceNotifier | undefined
  readiness: Readiness
  server: RunningServer
  /** The issuer and every absolute link: --base-url, else the listening address. */
  baseUrl: string
  app: OpenAPIHono
  worker: Workers | undefined
}

/**
 * Builds the process serve runs, in the order its start needs: the access log first (a path that
 * cannot be written is refused before anything starts), then the store and its keys (a process
 * that could not sign anyone in, PostgreSQL without MEDPANEL_SECRET_KEY, must not start and report
 * itself healthy), then the socket, and the app once the socket is bound, since the listening
 * address (with port 0, known only then) is the issuer when there is no base URL. The workers are
 * made, not started.
 */
export async function compose(settings: ServeSettings): Promise<ServeProcess> {
  const accessLog = settings.accessLog === undefined ? undefined : logFile(settings.accessLog)
  // Lines of its own go straight out; the access log and the workers share the batched sink.
  const logger = createLogger((line) => process.stderr.write(`${line}\n`), settings.logFormat)
  const requestLogger = createLogger(accessLog?.write ?? stderrLog, settings.logFormat)
  // systemd's Type=notify (deploy/medpanel.service); nothing without NOTIFY_SOCKET.
  const notifier = serviceNotifier({NOTIFY_SOCKET: settings.notifySocket}, (line) => logger.log('warn', `Warning: ${line}`, line))
  onHangup(accessLog, logger, notifier)
  const store = await settings.openStore()
  // Read now: a store whose keys cannot be had (PostgreSQL without MEDPANEL_SECRET_KEY) stops here.
  const keys = store.keys
  if (settings.passwordHashes !== undefined) setPasswordHashSlots(settings.passwordHashes)
  if (settings.replicaUrl !== undefined) {
    const replica = printableUrl(settings.replicaUrl)
    logger.log('info', `conversation searches read from the replica ${replica}`, 'searches read from a replica', {replica})
  }
  const metrics = settings.metrics ? storeMetrics(store, settings.clock) : undefined
  // Starting until the demo data exists: the socket is bound first (the demo's URLs need its port),
  // and until then every path but the probes answers 503 (src/app.ts).
  const readiness: Readiness = {phase: settings.demo ? 'starting' : 'ready', reason: 'seeding the demo data set'}
  // No request is read before the app exists: it is made straight after the listen callback,
  // before any connection is served.
  let app: OpenAPIHono | undefined
  let front: FrontDoor | undefined
  const server = await startServer(
    {
      fetch: (request: Request, env?: object) => (app ? app.fetch(request, env) : new Response(null, {status: 503, headers: {'Retry-After': '1'}})),
      // Token info's answer from memory, once the app is there (http/front-door.ts).
      front: (request, response) => front?.(request, response) ?? false,
    },
    settings.listen,
  )
  const baseUrl = settings.publicBase ?? server.url
  app = createApp(appSettings(settings, {store, baseUrl, readiness, metrics, requestLogger, listening: server.url}))
  front = frontDoorOf(app)
  const worker = settings.worker ? outboxWorkers(store, settings.clock, baseUrl, settings.logFormat, metrics) : undefined
  return {store, clock: settings.clock, logger, requestLogger, accessLog, metrics, keys, reader: store.reader, notifier, readiness, server, baseUrl, app, worker}
}

/** The app's settings from serve's and what the start found out (the store, the listening address). */
function appSettings(
  settings: ServeSettings,
  found: {store: ServiceStore; baseUrl: string; readiness: Readiness; metrics: Metrics | undefined; requestLogger: Logger; listening: string},
): AppSettings {
  return {
    store: found.store,
    clock: settings.clock,
    baseUrl: found.baseUrl,
    trustProxy: settings.trustProxy,
    guessingAllow: settings.guessingAllow,
    allowedHosts: defaultAllowedHosts(found.listening, settings.publicBase, [...settings.extraHosts]),
    demo: settings.demo,
    readiness: found.readiness,
    metrics: found.metrics ?? false,
    ...(settings.metricsToken !== undefined ? {metricsToken: settings.metricsToken} : {}),
    logger: found.requestLogger,
  }
}

/**
 * The partner delivery worker and the back-channel logout worker, over the same guarded
 * transport, counting into the app's registry; their lines go to the batched stderr sink, never
 * to --access-log's file.
 */
function outboxWorkers(store: ServiceStore, clock: Clock, issuer: string, logFormat: LogFormat, metrics: Metrics | undefined): Workers {
  const {db, reader, keys} = store
  const delivery = new DeliveryWorker({db: narrow(db), keys, clock, transport: partnerTransport, log: stderrLog, logFormat, metrics})
  const logout = new LogoutWorker({db: narrow(db), reader: narrow(reader), keys, clock, transport: partnerTransport, issuer, log: stderrLog, logFormat, metrics})
  return {
    start: () => {
      delivery.start()
      logout.start()
    },
    stop: async () => void (await Promise.all([delivery.stop(), logout.stop()])),
    delivering: () => delivery.delivering(),
  }
}

/**
 * SIGHUP (logrotate's postrotate, systemd's ExecReload) reopens --access-log. Listened for from the
 * start, since Node's default for SIGHUP is to exit; without --access-log there is nothing to reopen.
 */
function onHangup(accessFile: LogFile | undefined, events: Logger, notifier: ServiceNotifier | undefined): void {
  process.on('SIGHUP', () => {
    if (notifier) notifier.reload(() => reopen(accessFile, events))
    else reopen(accessFile, events)
  })
}

function reopen(accessFile: LogFile | undefined, events: Logger): void {
  if (!accessFile) {
    events.log('info', 'received SIGHUP: no --access-log to reopen', 'reload: nothing to reopen', {signal: 'SIGHUP'})
    return
  }
  try {
    accessFile.reopen()
    events.log('info', `received SIGHUP, reopened the access log ${accessFile.path}`, 'reload: access log reopened', {signal: 'SIGHUP', path: accessFile.path})
  } catch (error) {
    events.log('error', `received SIGHUP, kept the access log open: ${(error as Error).message}`, 'reload: access log not reopened', {
      signal: 'SIGHUP',
      error: (error as Error).message,
    })
  }
}

/** What `partner-serve` is told: the reference partner's own file, its Basic pair, where to listen. */
export interface PartnerSettings {
  file: string
  username: string
  password: string
  clock: Clock
  listen: {port: number; host: string}
  logFormat: LogFormat
  /** The key of medpanel's signing secret for this partner (--signing-secret): writes must be signed with it. */
  signingKey?: Uint8Array
}

/** The reference partner as it runs: its own store, its app and socket, and its one logger on stderr. */
export interface PartnerProcess {
  store: ReceiverStore
  logger: Logger
  app: Hono<HttpEnv>
  server: RunningServer
}

/**
 * Builds the reference partner (partner-serve): its own SQLite file, never medpanel's store. A
 * socket that cannot be opened closes the store again before the error goes up.
 */
export async function composePartner(settings: PartnerSettings): Promise<PartnerProcess> {
  const store = await openReceiverStore(settings.file)
  try {
    const logger = createLogger((line) => process.stderr.write(`${line}\n`), settings.logFormat)
    const {username, password, clock, logFormat, signingKey} = settings
    const app = receiverApp({db: store.db, username, password, clock, logFormat, signingKey})
    const server = await startServer(app, settings.listen)
    return {store, logger, app, server}
  } catch (error) {
    await store.close()
    throw error
  }
}
