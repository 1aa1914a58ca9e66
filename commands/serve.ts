import * as Flags from '@oclif/core/flags'
import {AppError} from '../src/errors.js'
import {compose, type ServeProcess, type ServeSettings} from '../src/compose.js'
import {describeDemo, seedDemo} from '../src/demo.js'
import {stopSignals} from '../src/server.js'
import {stopServing} from '../src/serve-stop.js'
import {isPostgresUrl} from '../src/store/db.js'
import {BaseCommand, logFormatFlag} from './base-command.js'
import {demoNote} from './support/audit-notes.js'
import {config, credential} from '../src/config.js'
import {jsonLogLine} from '../src/lib/log.js'
import {parseAddressList, parseTrustedProxies} from '../src/http/client-address.js'
import {mostHashSlots, threadPoolSize} from '../src/registry/throttle.js'
import {parseMetricsToken} from '../src/http/metrics-endpoint.js'
import {allowedHostEntries, listensOnEveryAddress} from '../src/http/allowed-hosts.js'

export default class Serve extends BaseCommand<typeof Serve> {
  static override description =
    'Serve interfaces A (sign-on), C (balances), D (pulse export) and E (conversations) over HTTP, with the probes /livez and /readyz (= /healthz), /openapi.json and /docs, and run the delivery worker of B. Until it is ready (under --demo, until the demo is seeded) every other path answers 503 with Retry-After'
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
    const settings = this.settings()
    // Listen for SIGINT/SIGTERM before anything is announced: a stop that arrives right after the
    // ready line (or during start-up) still gets the graceful path, never the default kill.
    const signals = stopSignals()
    const running = await compose(settings)
    const demo = await this.seedDemo(running)
    this.announceNewStore()
    this.announce(running, demo)
    running.worker?.start()
    // Only now: the socket listens, the store is open and the app answers /healthz with 200.
    running.notifier?.ready()
    await stopServing(running, await signals.first, signals, this.flags['drain-seconds'] * 1000)
  }

  /** Serve's settings from its flags and environment, each checked before anything starts. */
  private settings(): ServeSettings {
    const flags = this.flags
    const publicBase = publicOrigin(flags['base-url'])
    const extraHosts = allowedHostEntries(flags['allowed-host'])
    const trustProxy = parseTrustedProxies(flags['trust-proxy'] ?? [])
    const guessingAllow = parseAddressList(flags['guessing-allow'] ?? [], '--guessing-allow')
    const passwordHashes = checkedHashSlots(flags['password-hashes'])
    // Under systemd the token may come as a credential (LoadCredential=medpanel-metrics-token:…).
    const metricsToken = parseMetricsToken(flags['metrics-token'] ?? credential(process.env, 'medpanel-metrics-token'))
    if (metricsToken !== undefined && !flags.metrics) throw new AppError('bad_request', '--metrics-token opens /metrics, which --no-metrics turns off: give one or the other')
    // 0.0.0.0 or :: is no address a client can be sent to, so it cannot be the issuer.
    if (publicBase === undefined && listensOnEveryAddress(flags.host)) {
      const why = `--host ${flags.host} listens on every address and names none of them: give --base-url (or MEDPANEL_BASE_URL), the address clients use (e.g. https://panel.example.com)`
      throw new AppError('bad_request', why)
    }
    const listenUrl = this.postgresUrlFlag('listen-url', 'MEDPANEL_LISTEN_URL')
    const replicaUrl = this.postgresUrlFlag('replica-url', 'MEDPANEL_REPLICA_URL')
    return {
      openStore: () => this.openStore({reader: true, ...(listenUrl !== undefined ? {listenUrl} : {}), ...(replicaUrl !== undefined ? {replicaUrl} : {})}),
      clock: this.clock,
      listen: {port: flags.port, host: flags.host},
      ...(publicBase !== undefined ? {publicBase} : {}),
      extraHosts,
      trustProxy,
      guessingAllow,
      ...(passwordHashes !== undefined ? {passwordHashes} : {}),
      ...(replicaUrl !== undefined ? {replicaUrl} : {}),
      demo: flags.demo,
      metrics: flags.metrics,
      ...(metricsToken !== undefined ? {metricsToken} : {}),
      logFormat: this.logFormat(),
      ...(flags['access-log'] !== undefined ? {accessLog: flags['access-log']} : {}),
      worker: flags.worker,
      // systemd's, not a medpanel setting: handed to the notifier as the environment has it.
      ...(process.env.NOTIFY_SOCKET !== undefined ? {notifySocket: process.env.NOTIFY_SOCKET} : {}),
    }
  }

  /** The demo data set under --demo, after which the service answers (and /readyz says ready); undefined without --demo. */
  private async seedDemo(running: ServeProcess): Promise<Awaited<ReturnType<typeof seedDemo>> | undefined> {
    try {
      const warn = (line: string) => running.logger.log('warn', `Warning: ${line}`, line)
      const demo = this.flags.demo ? await seedDemo(running.store, running.baseUrl, this.clock.now(), {force: this.flags.force, warn}) : undefined
      if (demo) await this.recordAudit(demoNote(demo, this.flags.force), running.store)
      running.readiness.phase = 'ready'
      return demo
    } catch (error) {
      // Without this the listening socket would keep a process alive that already said Error.
      await running.server.close()
      throw error
    }
  }

  /** The ready line on stdout: the address (and the demo's credentials), in the format asked for. */
  private announce(running: ServeProcess, demo: Awaited<ReturnType<typeof seedDemo>> | undefined): void {
    const {server, baseUrl} = running
    if (this.jsonEnabled()) {
      this.logJson({url: server.url, base_url: baseUrl, demo: demo ?? null})
    } else if (running.logger.format === 'json') {
      // One object per line on stdout as well; the demo's credentials stay out of it (they are
      // published, and `serve --demo --json` prints them whole).
      if (demo) this.log(jsonLogLine('info', 'demo data set ready', {client_id: demo.client.client_id, member_email: demo.member.email, authorize_url: demo.authorize_url}))
      this.log(jsonLogLine('info', 'listening', {url: server.url, base_url: baseUrl}))
    } else {
      if (demo) this.log(`${describeDemo(demo)}\n`)
      this.log(`medpanel listening on ${server.url} (Ctrl-C to stop)`)
    }
  }
}

/** --base-url as an origin: the service's public address, http(s)://host[:port] and nothing more. */
function publicOrigin(given: string | undefined): string | undefined {
  if (given === undefined) return undefined
  let url: URL | undefined
  try {
    url = new URL(given)
  } catch {
    url = undefined
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new AppError('bad_request', `--base-url must be the service's public address, as http(s)://host[:port] with no path (got "${given}")`)
  }
  return url.origin
}

/** --password-hashes, refused when Node's thread pool leaves fewer threads for hashes. */
function checkedHashSlots(hashSlots: number | undefined): number | undefined {
  if (hashSlots !== undefined && hashSlots > mostHashSlots()) {
    const pool = threadPoolSize()
    throw new AppError(
      'bad_request',
      `--password-hashes ${hashSlots} is more than Node's thread pool leaves for hashes (${mostHashSlots()}: UV_THREADPOOL_SIZE is ${pool}, one thread kept for files and DNS); set UV_THREADPOOL_SIZE=${hashSlots + 1} too`,
    )
  }
  return hashSlots
}
