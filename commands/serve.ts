import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {createApp} from '../src/app.js'
import {describeDemo, seedDemo} from '../src/demo.js'
import {startServer, stopSignals} from '../src/server.js'
import {drain} from '../src/serve-stop.js'
import {checkpointStore, isPostgresUrl, keyringOf, printableUrl, writeStats} from '../src/store/db.js'
import {partnerTransport} from '../src/http/outbound.js'
import {DeliveryWorker} from '../src/interfaces/partner/worker.js'
import {LogoutWorker} from '../src/interfaces/signon/logout-worker.js'
import {BaseCommand, logFormatFlag} from './base-command.js'
import {logFile, stderrLog, type LogFile} from '../src/http/access-log.js'
import {config, credential} from '../src/config.js'
import {serviceNotifier, type ServiceNotifier} from '../src/lib/sd-notify.js'
import {createLogger, jsonLogLine} from '../src/lib/log.js'
import {parseAddressList, parseTrustedProxies} from '../src/http/client-address.js'
import {mostHashSlots, setPasswordHashSlots, threadPoolSize} from '../src/registry/throttle.js'
import {parseMetricsToken} from '../src/http/metrics-endpoint.js'
import {allowedHostEntries, defaultAllowedHosts, listensOnEveryAddress} from '../src/http/allowed-hosts.js'

export default class Serve extends BaseCommand<typeof Serve> {
  static override description =
    'Serve interfaces A (sign-on), C (balances), D (pulse export) and E (conversations) over HTTP, with /healthz, /openapi.json and /docs, and run the delivery worker of B'
  static override examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve --demo --port 8080',
    '<%= config.bin %> serve --port 0 --json   # any free port; prints its address once ready',
    '<%= config.bin %> serve --host 0.0.0.0 --base-url https://panel.example.com',
    '<%= config.bin %> serve --base-url https://panel.example.com --trust-proxy 127.0.0.1   # behind a TLS proxy on this machine',
    'MEDPANEL_METRICS_TOKEN="$(cat /etc/medpanel/metrics-token)" <%= config.bin %> serve --host 0.0.0.0 --base-url https://panel.example.com   # /metrics for a remote Prometheus',
    '<%= config.bin %> serve --host 0.0.0.0 --base-url https://panel.example.com --allowed-host 10.0.0.5:8080 --allowed-host .internal.example   # also answer to these names',
    '<%= config.bin %> serve --log-format json   # one JSON object per log line, for a log collector',
    '<%= config.bin %> serve --port 0 --json --access-log access.log --drain-seconds 10   # requests logged to access.log (kill -HUP reopens it, for logrotate); on SIGTERM, up to 10 s for requests in flight',
  ]

  static override flags = {
    port: Flags.integer({description: 'TCP port (0 picks a free one)', default: 8080, min: 0, max: 65535}),
    host: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    'base-url': Flags.string({
      description: 'public address of the service: the OAuth issuer and every link it writes (default http://HOST:PORT; needed with --host 0.0.0.0)',
      env: 'MEDPANEL_BASE_URL',
    }),
    'allowed-host': Flags.string({
      description:
        'another host name requests may be addressed to, NAME or NAME:PORT (a leading dot allows subdomains); repeat or separate with commas. Always allowed: the --base-url host and the listening address (on loopback also localhost); any other host is answered 421',
      multiple: true,
      delimiter: ',',
      env: 'MEDPANEL_ALLOWED_HOSTS',
    }),
    'guessing-allow': Flags.string({
      description:
        "address or CIDR exempt from the limit on wrong passwords from one address across members (a hospital's or office's shared exit); repeat or separate with commas. The per-member limits still apply",
      multiple: true,
      delimiter: ',',
      env: 'MEDPANEL_GUESSING_ALLOW',
    }),
    'password-hashes': Flags.integer({
      description:
        'password hashes (sign-in checks) run at once; the others wait in a queue shared fairly among addresses and members, and a full queue answers 429. Default: one per core, at most UV_THREADPOOL_SIZE - 1 (Node runs hashes in that pool, beside file and DNS work)',
      min: 1,
      env: 'MEDPANEL_PASSWORD_HASHES',
    }),
    'trust-proxy': Flags.string({
      description:
        'address or CIDR of a reverse proxy in front of serve; repeat or separate with commas. Only requests from these peers have their caller taken from X-Forwarded-For (its right-most address that is not a listed proxy), for the guessing limits and the access log',
      multiple: true,
      delimiter: ',',
      env: 'MEDPANEL_TRUST_PROXY',
    }),
    demo: Flags.boolean({description: 'seed the demo data set first (into ./medpanel-demo.db unless --db says otherwise) and print its credentials', default: false}),
    force: Flags.boolean({description: 'with --demo: seed even a store that holds other clients or members (adds the published demo secret there)', default: false}),
    worker: Flags.boolean({
      description: 'run the interface B delivery worker and the back-channel logout worker (--no-worker to leave both outboxes alone)',
      default: true,
      allowNo: true,
    }),
    'log-format': logFormatFlag(),
    metrics: Flags.boolean({
      description: 'count Prometheus metrics and serve them at /metrics (--no-metrics: neither, e.g. to measure what they cost)',
      default: true,
      allowNo: true,
    }),
    'listen-url': Flags.string({
      description:
        "with --database-url through a pooler in transaction mode (PgBouncer): a URL that reaches the same PostgreSQL database directly, for the one connection per process that listens for cache changes. Without it the caches stay off behind such a pooler (every lookup reads the database); a URL on which the store's own notifications are not heard leaves them off too",
      env: 'MEDPANEL_LISTEN_URL',
      helpGroup: 'STORE',
    }),
    'replica-url': Flags.string({
      description:
        "with --database-url: a hot standby (read replica) of the same PostgreSQL database, which conversation searches read from, so their load leaves the primary; everything else reads and writes the primary. A search may then miss posts written in the last moments before it (the standby's replay lag). A URL that is no replica of the store's database is refused at start",
      env: 'MEDPANEL_REPLICA_URL',
      helpGroup: 'STORE',
    }),
    'drain-seconds': Flags.integer({
      description: `on SIGTERM or SIGINT, how long requests in flight and the delivery worker's send may take to finish; then (or on a second signal) serve exits at once, non-zero, saying what it abandoned`,
      default: config.http.server.drainSeconds,
      min: 1,
      env: 'MEDPANEL_DRAIN_SECONDS',
    }),
    'access-log': Flags.string({
      description: 'append the access log (one line per request, and request failures) to this file instead of stderr; SIGHUP reopens it, for logrotate',
      env: 'MEDPANEL_ACCESS_LOG',
    }),
    'metrics-token': Flags.string({
      description:
        'a secret (16+ characters; openssl rand -hex 32) that opens /metrics to any caller sending it as "Authorization: Bearer TOKEN", and only to them; without it /metrics answers only loopback callers. Prefer the variable, which ps does not show',
      env: 'MEDPANEL_METRICS_TOKEN',
    }),
  }

  protected override usesDemoStore(): boolean {
    return this.flags.demo
  }

  /** A flag that names a second way into a PostgreSQL store: a postgres:// URL, beside --database-url postgres://…. */
  private postgresUrlFlag(name: 'listen-url' | 'replica-url', variable: string): string | undefined {
    const url = this.flags[name]
    if (url === undefined) return undefined
    if (!isPostgresUrl(url)) throw new AppError('bad_request', `--${name} (or ${variable}) must be a postgres:// URL`)
    if (!isPostgresUrl(this.flags['database-url'])) {
      throw new AppError('bad_request', `--${name} (or ${variable}) applies to a PostgreSQL store: give --database-url postgres://… too`)
    }
    return url
  }

  async run(): Promise<void> {
    const given = this.flags['base-url']
    let publicBase: string | undefined
    if (given !== undefined) {
      let url: URL | undefined
      try {
        url = new URL(given)
      } catch {
        url = undefined
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
        throw new AppError('bad_request', `--base-url must be the service's public address, as http(s)://host[:port] with no path (got "${given}")`)
      }
      publicBase = url.origin
    }
    const extraHosts = allowedHostEntries(this.flags['allowed-host'])
    const trustProxy = parseTrustedProxies(this.flags['trust-proxy'] ?? [])
    const guessingAllow = parseAddressList(this.flags['guessing-allow'] ?? [], '--guessing-allow')
    const hashSlots = this.flags['password-hashes']
    if (hashSlots !== undefined && hashSlots > mostHashSlots()) {
      const pool = threadPoolSize()
      throw new AppError(
        'bad_request',
        `--password-hashes ${hashSlots} is more than Node's thread pool leaves for hashes (${mostHashSlots()}: UV_THREADPOOL_SIZE is ${pool}, one thread kept for files and DNS); set UV_THREADPOOL_SIZE=${hashSlots + 1} too`,
      )
    }
    // Under systemd the token may come as a credential (LoadCredential=medpanel-metrics-token:…).
    const metricsToken = parseMetricsToken(this.flags['metrics-token'] ?? credential(process.env, 'medpanel-metrics-token'))
    if (metricsToken !== undefined && !this.flags.metrics) throw new AppError('bad_request', '--metrics-token opens /metrics, which --no-metrics turns off: give one or the other')
    // 0.0.0.0 or :: is no address a client can be sent to, so it cannot be the issuer.
    if (publicBase === undefined && listensOnEveryAddress(this.flags.host)) {
      const why = `--host ${this.flags.host} listens on every address and names none of them: give --base-url (or MEDPANEL_BASE_URL), the address clients use (e.g. https://panel.example.com)`
      throw new AppError('bad_request', why)
    }
    const listenUrl = this.postgresUrlFlag('listen-url', 'MEDPANEL_LISTEN_URL')
    const replicaUrl = this.postgresUrlFlag('replica-url', 'MEDPANEL_REPLICA_URL')
    // Listen for SIGINT/SIGTERM before anything is announced: a stop that arrives right after the
    // ready line (or during start-up) still gets the graceful path below, never the default kill.
    const signals = stopSignals()
    // Opened before the store: a log path that cannot be written is refused before anything starts.
    const accessFile = this.flags['access-log'] === undefined ? undefined : logFile(this.flags['access-log'])
    const logFormat = this.logFormat()
    // Lines of their own (start, stop, warnings) go straight out, as they always did; the access
    // log and the worker share the batched stderr sink.
    const events = createLogger((line) => process.stderr.write(`${line}\n`), logFormat)
    // systemd's Type=notify (deploy/medpanel.service); nothing without NOTIFY_SOCKET.
    const notifier = serviceNotifier(process.env, (line) => events.log('warn', `Warning: ${line}`, line))
    onHangup(accessFile, events, notifier)
    const {db} = await this.openStore({reader: true, ...(listenUrl !== undefined ? {listenUrl} : {}), ...(replicaUrl !== undefined ? {replicaUrl} : {})})
    // The store's keys are read now, not at the first sign-in: a process that could not sign
    // anyone in (PostgreSQL without MEDPANEL_SECRET_KEY) must not start and report itself healthy.
    keyringOf(db)
    if (hashSlots !== undefined) setPasswordHashSlots(hashSlots)
    const flags = this.flags
    if (replicaUrl !== undefined) {
      const replica = printableUrl(replicaUrl)
      events.log('info', `conversation searches read from the replica ${replica}`, 'searches read from a replica', {replica})
    }
    // Unready until the demo data exists: the socket is bound first (the demo's URLs need its port).
    const readiness = {ready: !flags.demo, reason: 'seeding the demo data set'}
    // The app is made once the socket is bound, since the listening address (with --port 0, known
    // only then) is the issuer when there is no --base-url. No request is read before it exists:
    // these lines run straight after the listen callback, before any connection is served.
    let app: ReturnType<typeof createApp> | undefined
    const server = await startServer(
      {fetch: (request: Request, env?: object) => (app ? app.fetch(request, env) : new Response(null, {status: 503, headers: {'Retry-After': '1'}}))},
      {port: flags.port, host: flags.host},
    )
    const baseUrl = publicBase ?? server.url
    app = createApp({
      db,
      clock: this.clock,
      baseUrl,
      trustProxy,
      guessingAllow,
      allowedHosts: defaultAllowedHosts(server.url, publicBase, extraHosts),
      demo: flags.demo,
      readiness,
      metrics: flags.metrics,
      metricsToken,
      logFormat,
      ...(accessFile ? {log: accessFile.write} : {}),
    })
    let demo: Awaited<ReturnType<typeof seedDemo>> | undefined
    try {
      demo = flags.demo ? await seedDemo(db, baseUrl, this.clock.now(), {force: flags.force, warn: (line) => events.log('warn', `Warning: ${line}`, line)}) : undefined
      readiness.ready = true
    } catch (error) {
      // Without this the listening socket would keep a process alive that already said Error.
      await server.close()
      throw error
    }
    this.announceNewStore()
    if (this.jsonEnabled()) {
      this.logJson({url: server.url, base_url: baseUrl, demo: demo ?? null})
    } else if (logFormat === 'json') {
      // One object per line on stdout as well; the demo's credentials stay out of it (they are
      // published, and `serve --demo --json` prints them whole).
      if (demo) this.log(jsonLogLine('info', 'demo data set ready', {client_id: demo.client.client_id, member_email: demo.member.email, authorize_url: demo.authorize_url}))
      this.log(jsonLogLine('info', 'listening', {url: server.url, base_url: baseUrl}))
    } else {
      if (demo) this.log(`${describeDemo(demo)}\n`)
      this.log(`medpanel listening on ${server.url} (Ctrl-C to stop)`)
    }
    const worker = flags.worker ? new DeliveryWorker({db, clock: this.clock, transport: partnerTransport, log: stderrLog, logFormat}) : undefined
    worker?.start()
    // Back-channel logout tokens go out with the partner pushes, over the same guarded transport.
    const logoutWorker = flags.worker ? new LogoutWorker({db, clock: this.clock, transport: partnerTransport, issuer: baseUrl, log: stderrLog, logFormat}) : undefined
    logoutWorker?.start()
    // Only now: the socket listens, the store is open and the app answers /healthz with 200.
    notifier?.ready()
    const signal = await signals.first
    events.log('info', `received ${signal}, finishing requests in flight…`, 'stopping: finishing requests in flight', {signal})
    readiness.ready = false
    readiness.reason = 'stopping'
    notifier?.stopping()
    // The worker finishes and records its sends in flight before the store closes under it.
    // Both workers finish their sends in flight while the requests do (a logout post is retried by
    // the next serve if this one is cut); only the partner worker's is worth naming when cut.
    const workers =
      worker || logoutWorker ? {stop: async () => void (await Promise.all([worker?.stop(), logoutWorker?.stop()])), delivering: () => worker?.delivering() ?? false} : undefined
    await drain({server, ...(workers ? {worker: workers} : {}), drainMs: flags['drain-seconds'] * 1000, signals, logFormat})
    const whole = await checkpointStore(db)
    if (whole === false) events.log('warn', 'store: a reader held the write-ahead log back; the next start moves the rest into the store', 'store checkpoint incomplete')
    // What this process changed in the store since it started: every write transaction (requests
    // and the delivery worker), and how many commits (syncs) they took; SQLite's group commit puts
    // several in one. An idle serve writes nothing, and says so.
    const {writes, commits} = writeStats(db)
    const text =
      writes === 0
        ? 'store: since start, 0 write transactions (nothing changed)'
        : `store: since start, ${writes} write transaction${writes === 1 ? '' : 's'} (requests and delivery worker) in ${commits} commit${commits === 1 ? '' : 's'}, ${(writes / Math.max(commits, 1)).toFixed(1)} per commit`
    events.log('info', text, 'store write transactions', {writes, commits})
    await notifier?.sent()
  }
}

/**
 * SIGHUP (logrotate's postrotate, systemd's ExecReload) reopens --access-log. Listened for from the
 * start, since Node's default for SIGHUP is to exit; without --access-log there is nothing to reopen.
 */
function onHangup(accessFile: LogFile | undefined, events: ReturnType<typeof createLogger>, notifier: ServiceNotifier | undefined): void {
  process.on('SIGHUP', () => {
    if (notifier) notifier.reload(() => reopen(accessFile, events))
    else reopen(accessFile, events)
  })
}

function reopen(accessFile: LogFile | undefined, events: ReturnType<typeof createLogger>): void {
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
