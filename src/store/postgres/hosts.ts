import type {Client as PgClient, ClientConfig} from 'pg'

/*
 * Several servers in one URL, as libpq takes them: `postgres://user@h1:5432,h2:5433/db?
 * target_session_attrs=read-write`. node-postgres (pg 8) reads one host only and knows nothing of
 * target_session_attrs, so this module does what libpq does: it tries the hosts in turn and keeps
 * the first whose server is of the kind asked for. A failover manager (pg_auto_failover, Patroni)
 * promotes a standby; the store's connections then find the new primary by themselves.
 *
 * Every connection opened through a Targets is checked once it is up (one query), and a
 * connection whose statement failed because its server is no longer what was asked for (a demoted
 * primary answers 25006, read-only transaction) or went away is never handed out again.
 */

/** libpq's target_session_attrs (PostgreSQL 14 and later). */
export type SessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby' | 'prefer-standby'

const ATTRS: readonly SessionAttrs[] = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby']

export interface HostPort {
  host: string
  port: number
}

export interface ParsedTargets {
  hosts: HostPort[]
  attrs: SessionAttrs
  /** The URL with the first host only and without target_session_attrs: what pg can parse. */
  base: string
}

/**
 * The hosts and target_session_attrs of a URL; undefined for a URL of one host without
 * target_session_attrs (pg reads those itself). Throws on a target_session_attrs libpq would refuse.
 */
export function parseTargets(url: string): ParsedTargets | undefined {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/i.exec(url)
  if (!match) return undefined
  const [, scheme, userinfo, hostList = '', rest = ''] = match
  const [path = '', query = ''] = splitOnce(rest, '?')
  const params = new URLSearchParams(query)
  const given = params.get('target_session_attrs')
  if (!hostList.includes(',') && given === null) return undefined
  if (given !== null && !ATTRS.includes(given as SessionAttrs)) {
    throw new Error(`target_session_attrs must be one of ${ATTRS.join(', ')} (got "${given}")`)
  }
  params.delete('target_session_attrs')
  const defaultPort = Number(params.get('port') ?? 5432)
  const hosts = hostList.split(',').map((part) => hostPort(part, defaultPort))
  const remaining = params.toString()
  const first = hosts[0]!
  const base = `${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${first.host.includes(':') ? `[${first.host}]` : first.host}:${first.port}${path}${remaining ? `?${remaining}` : ''}`
  return {hosts, attrs: (given as SessionAttrs | null) ?? 'any', base}
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator)
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)]
}

function hostPort(part: string, defaultPort: number): HostPort {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(part)
  const plain = /^([^:]*)(?::(\d+))?$/.exec(part)
  const found = bracketed ?? plain
  if (!found || found[1] === '') throw new Error(`cannot read the host "${part}" of the database URL`)
  return {host: decodeURIComponent(found[1]!), port: found[2] ? Number(found[2]) : defaultPort}
}

/** What a server says of itself, enough to decide every target_session_attrs. */
export interface ServerRole {
  /** pg_is_in_recovery(): a standby. */
  recovery: boolean
  /** transaction_read_only for a new transaction (a standby's, or default_transaction_read_only). */
  readOnly: boolean
}

const ROLE_QUERY = `select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') = 'on' as read_only`

/** Whether a server of `role` is what `attrs` asks for; prefer-standby takes any server (a standby first). */
export function fits(attrs: SessionAttrs, role: ServerRole): boolean {
  switch (attrs) {
    case 'read-write':
      return !role.readOnly
    case 'read-only':
      return role.readOnly
    case 'primary':
      return !role.recovery
    case 'standby':
      return role.recovery
    default:
      return true
  }
}

/**
 * Errors after which a connection's server is not to be used again as it is: read-only where
 * writes were asked for (25006: the primary was demoted under it), shut down or crashed (57P01-3),
 * or the connection itself broke or was refused.
 */
export function isServerGone(error: unknown): boolean {
  const code = (error as {code?: unknown} | null)?.code
  if (typeof code === 'string') {
    if (code === '25006' || /^57P0[123]$/.test(code) || /^08/.test(code)) return true
    if (['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code)) return true
  }
  return error instanceof Error && /^Connection terminated|not queryable$/.test(error.message)
}

/** No server of the URL was of the kind asked for (or none answered): nothing was sent. */
export class NoTargetError extends Error {
  /** SQLSTATE 08001, sqlclient_unable_to_establish_sqlconnection, as libpq reports it. */
  readonly code = '08001'
}

type Probe = (host: HostPort) => Promise<ServerRole>

/** What a selector reports as it happens (the store's metrics count it). */
export interface SelectorEvents {
  /** New connections go to another server than before: a failover (or a switchover). */
  failover?: () => void
  /** A server fits again after `seconds` without one (the first connection that found it). */
  restored?: (seconds: number) => void
}

/**
 * Which host new connections go to: the last one that fitted, until a connection there fails or
 * no longer fits; then every host is asked again in order (prefer-standby: a standby, else any).
 * From the moment the chosen host is given up until one fits again, the URL has no server of the
 * kind asked for (for read-write: no primary), and the selector keeps count of that time.
 */
export class HostSelector {
  #current: HostPort | undefined
  #lastChosen: HostPort | undefined
  #picking: Promise<HostPort> | undefined
  /** When the chosen host was given up (or the first search failed); undefined while one is chosen. */
  #lostAt: number | undefined
  /** Times the chosen host changed after the first choice. */
  readonly stats = {switches: 0}
  readonly events: SelectorEvents = {}

  constructor(
    readonly hosts: readonly HostPort[],
    readonly attrs: SessionAttrs,
    private readonly probe: Probe,
    private readonly now: () => number = Date.now,
  ) {}

  get current(): HostPort | undefined {
    return this.#current
  }

  /** Seconds since the URL last had a server of the kind asked for; 0 while one is chosen. */
  secondsWithout(): number {
    return this.#lostAt === undefined ? 0 : (this.now() - this.#lostAt) / 1000
  }

  /** The host to connect to: the remembered one, or the first that fits now. */
  pick(): Promise<HostPort> {
    if (this.#current) return Promise.resolve(this.#current)
    this.#picking ??= this.search().finally(() => (this.#picking = undefined))
    return this.#picking
  }

  /** The server at `host` failed or no longer fits: the next pick asks every host again. */
  forget(host: HostPort): void {
    if (this.#current && same(this.#current, host)) {
      this.#current = undefined
      this.#lostAt ??= this.now()
    }
  }

  private async search(): Promise<HostPort> {
    const roles = new Map<HostPort, ServerRole>()
    const failures: string[] = []
    for (const host of this.hosts) {
      try {
        const role = await this.probe(host)
        roles.set(host, role)
        if (this.attrs === 'prefer-standby' ? role.recovery : fits(this.attrs, role)) return this.choose(host)
        failures.push(`${host.host}:${host.port} is ${role.recovery ? 'a standby' : role.readOnly ? 'read-only' : 'a primary'}`)
      } catch (error) {
        failures.push(`${host.host}:${host.port}: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    // prefer-standby: no standby answered; any server will do.
    const fallback = this.attrs === 'prefer-standby' ? [...roles.keys()][0] : undefined
    if (fallback) return this.choose(fallback)
    this.#lostAt ??= this.now()
    throw new NoTargetError(`no server of the database URL is ${describe(this.attrs)} (${failures.join('; ')})`)
  }

  private choose(host: HostPort): HostPort {
    if (this.#lastChosen && !same(this.#lastChosen, host)) {
      this.stats.switches++
      this.events.failover?.()
    }
    if (this.#lostAt !== undefined) {
      const seconds = (this.now() - this.#lostAt) / 1000
      this.#lostAt = undefined
      this.events.restored?.(seconds)
    }
    this.#lastChosen = host
    this.#current = host
    return host
  }
}

function same(a: HostPort, b: HostPort): boolean {
  return a.host === b.host && a.port === b.port
}

function describe(attrs: SessionAttrs): string {
  return attrs === 'read-write' ? 'writable (target_session_attrs=read-write)' : `of the kind asked for (target_session_attrs=${attrs})`
}

async function roleOf(client: {query: (text: string) => Promise<unknown>}): Promise<ServerRole> {
  const {rows} = (await client.query(ROLE_QUERY)) as {rows: {recovery: boolean; read_only: boolean}[]}
  return {recovery: rows[0]!.recovery, readOnly: rows[0]!.read_only}
}

type ClientClass = new (config?: ClientConfig) => PgClient

export interface Targets {
  selector: HostSelector
  /** A pg Client class that connects to the selected host (for a Pool's `Client` option, or alone). */
  Client: ClientClass
  /** The URL to give pg (the first host's, without target_session_attrs). */
  base: string
}

/**
 * The host selection of a multi-host URL, and a pg Client class that uses it. Each connection is
 * checked once open (the server may have changed role since it was chosen): one that does not fit
 * is closed and its connect fails with NoTargetError, after which the next connection asks every
 * host again. A connection whose statement fails as isServerGone says is marked, and its pool
 * (pg-pool's release) drops it instead of keeping it.
 */
export function targetsOf(pg: {Client: ClientClass}, parsed: ParsedTargets, probeTimeoutMs: number): Targets {
  const Base = pg.Client
  const selector = new HostSelector(parsed.hosts, parsed.attrs, prober(Base, parsed.base, probeTimeoutMs))

  class TargetedClient extends (Base as unknown as new (config: ClientConfig) => PgClient & {host: string; port: number}) {
    #host: HostPort | undefined
    /** The server is not to be used again: its pool drops this connection on release. */
    stale = false
    #release: ((error?: unknown) => void) | undefined

    constructor(config?: ClientConfig) {
      super(config ?? {})
      this.on('error', () => this.gone())
    }

    // pg-pool sets `release` on each checkout: a stale connection is released as broken.
    get release(): ((error?: unknown) => void) | undefined {
      return this.#release
    }

    set release(release: ((error?: unknown) => void) | undefined) {
      this.#release = release && ((error?: unknown) => release(error ?? (this.stale ? new Error('the server of this connection is no longer the one asked for') : undefined)))
    }

    private gone(): void {
      this.stale = true
      if (this.#host) selector.forget(this.#host)
    }

    override connect(callback?: (...args: any[]) => void): any {
      const connecting = this.open()
      if (!callback) return connecting.then(() => this)
      connecting.then(
        () => callback(null),
        (error: Error) => callback(error),
      )
      return undefined
    }

    private async open(): Promise<void> {
      const host = await selector.pick()
      this.#host = host
      this.host = host.host
      this.port = host.port
      await checkedConnect(selector, host, this as unknown as PgClient, {
        connect: async () => {
          await super.connect()
        },
        gone: () => this.gone(),
        stale: () => {
          this.stale = true
        },
      })
    }

    override query(...args: unknown[]): any {
      const result = (super.query as (...a: unknown[]) => unknown)(...args)
      if (result instanceof Promise) {
        result.catch((error: unknown) => {
          if (isServerGone(error)) this.gone()
        })
      }
      return result
    }
  }
  return {selector, Client: TargetedClient as unknown as ClientClass, base: parsed.base}
}

/** Asks one host what it is, on a connection of its own (pg's `Client` class given). */
function prober(Base: ClientClass, base: string, probeTimeoutMs: number): Probe {
  return async (host) => {
    // pg takes the connection string's host over a `host` option: the host is set after.
    const client = new Base({connectionString: base, connectionTimeoutMillis: probeTimeoutMs}) as unknown as PgClient & HostPort
    client.host = host.host
    client.port = host.port
    client.on('error', () => undefined)
    try {
      await client.connect()
      return await roleOf(client)
    } finally {
      client.end().catch(() => undefined)
    }
  }
}

/**
 * Opens a connection to `host` and checks its server is still of the kind asked for: a host that
 * does not answer is given up; one that answers as the wrong kind (a demoted primary) too, and the
 * connection is closed, so the pool tries again.
 */
async function checkedConnect(selector: HostSelector, host: HostPort, client: PgClient, on: {connect: () => Promise<void>; gone: () => void; stale: () => void}): Promise<void> {
  try {
    await on.connect()
  } catch (error) {
    selector.forget(host)
    throw error
  }
  const role = await roleOf(client).catch(async (error: unknown) => {
    on.gone()
    await client.end().catch(() => undefined)
    throw error
  })
  if (!fits(selector.attrs, role)) {
    selector.forget(host)
    on.stale()
    await client.end().catch(() => undefined)
    throw new NoTargetError(`the server at ${host.host}:${host.port} is no longer ${describe(selector.attrs)}`)
  }
}
