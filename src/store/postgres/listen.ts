import {randomUUID} from 'node:crypto'
import type {CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult} from 'kysely'
import {config} from '../../config.js'
import {parseTargets, targetsOf} from './hosts.js'
import {loadPg} from './load.js'

/*
 * What keeps the caches of store/version-cache.ts correct on PostgreSQL, where several processes
 * write to one database. Two sources change a process's cache version:
 *
 * - other processes: triggers (migration 2026112801_cache_notify) call pg_notify on CACHE_CHANNEL
 *   in the transaction of every write that changes a cached row, whoever writes it (any command,
 *   any release, raw SQL). Each process LISTENs on a connection of its own and bumps its version
 *   when a notification arrives, a few milliseconds after the commit;
 * - this process: a notification about its own commit also arrives, but only after the commit has
 *   returned, so a request right behind a revoke could still be answered from memory. Its own
 *   writes are therefore recognised as they pass through Kysely's connection (trackCacheWrites),
 *   and the version is bumped as soon as the transaction that made them commits.
 *
 * While the listening connection is down, notifications are lost, so the version is undefined and
 * nothing is cached until the listener is back and has bumped the version once.
 */

/** The channel the triggers notify on. */
export const CACHE_CHANNEL = 'medpanel_cache'

/** Where a listener on a URL of its own checks that it hears the store's database (see ListenerOptions.probe). */
export const PROBE_CHANNEL = 'medpanel_cache_probe'

/** The application_name of the listening connection, with the process id so an operator can tell them apart. */
export function listenerName(pid: number = process.pid): string {
  return `medpanel-listen ${pid}`
}

/**
 * Tables whose rows the caches hold, with the columns whose change leaves a cached row as good as
 * it was (written on every use). Must agree with the triggers of 2026112801_cache_notify.
 */
const WATCHED: Record<string, ReadonlySet<string>> = {
  access_tokens: new Set(['last_used_at']),
  clients: new Set(),
  members: new Set(),
  conversation_api_keys: new Set(['data_calls_used', 'period_started_at']),
}

/** A process's cache version on PostgreSQL: a counter, readable only while changes can be heard. */
export class CacheVersion {
  #value = 0
  #live = false
  /** Notifications and own writes counted, and times the listener (re)connected: for tests and logs. */
  readonly stats = {changes: 0, connects: 0, losses: 0}
  /**
   * Why the listener gave up for good, leaving the caches off: its connection went through a
   * pooler ('pooler'), or a listen URL of its own did not hear the store's database ('unheard').
   */
  off: 'pooler' | 'unheard' | undefined

  /** The version caches key on; undefined while the listener is down (nothing may be cached). */
  readonly current = (): number | undefined => (this.#live ? this.#value : undefined)

  /** Something cached may have changed: every entry read before now is dropped. */
  changed(): void {
    this.#value++
    this.stats.changes++
  }

  /** The listener is down: changes by other processes go unheard from now on. */
  lost(): void {
    if (this.#live) this.stats.losses++
    this.#live = false
    this.#value++
  }

  /**
   * The listener is LISTENing again. Changes made while it was down were not heard, so whatever
   * was cached before is dropped, and caching resumes.
   */
  regained(): void {
    this.#value++
    this.#live = true
    this.stats.connects++
  }
}

type Operation = {kind: string; [key: string]: unknown}

function identifierOf(node: unknown): string | undefined {
  // TableNode {table: SchemableIdentifierNode {identifier: IdentifierNode {name}}}, maybe inside an AliasNode.
  const n = node as {kind?: string; node?: unknown; table?: {identifier?: {name?: string}}} | undefined
  if (n?.kind === 'AliasNode') return identifierOf(n.node)
  return n?.kind === 'TableNode' ? n.table?.identifier?.name : undefined
}

function columnsOf(updates: unknown): string[] {
  return ((updates as {column?: {column?: {name?: string}}}[] | undefined) ?? []).map((u) => u.column?.column?.name ?? '*')
}

function touchesWatched(table: string | undefined, columns: string[] | 'all'): boolean {
  const ignored = table === undefined ? undefined : WATCHED[table]
  if (!ignored) return false
  return columns === 'all' || columns.some((column) => !ignored.has(column))
}

const RAW_WRITE = /\b(?:update|delete\s+from|truncate(?:\s+table)?|insert\s+into)\s+(?:only\s+)?"?(\w+)"?/gi

/**
 * What a statement does to the caches' rows: 'begin' and 'end' of a transaction, 'write' when it
 * may change a cached row, undefined otherwise. Built queries are read from their operation tree;
 * raw SQL (sql`…`) is matched by its text, erring towards 'write'.
 */
export function classifyStatement(query: CompiledQuery): 'begin' | 'end' | 'write' | undefined {
  const node = query.query as unknown as Operation
  switch (node.kind) {
    case 'SelectQueryNode':
      return undefined
    case 'UpdateQueryNode':
      return touchesWatched(identifierOf(node.table), columnsOf(node.updates)) ? 'write' : undefined
    case 'DeleteQueryNode':
      return ((node.from as {froms?: unknown[]} | undefined)?.froms ?? []).some((from) => touchesWatched(identifierOf(from), 'all')) ? 'write' : undefined
    case 'InsertQueryNode': {
      // A new row is never in a cache (only found rows are kept); an upsert may change one.
      const conflict = node.onConflict as {updates?: unknown; doNothing?: boolean} | undefined
      return conflict?.updates && touchesWatched(identifierOf(node.into), columnsOf(conflict.updates)) ? 'write' : undefined
    }
  }
  const text = query.sql.trimStart()
  // A raw text may hold several statements (the group writer sends `release request; commit`):
  // the last that begins or ends the transaction decides.
  let boundary: 'begin' | 'end' | undefined
  for (const part of text.split(';')) {
    const statement = part.trimStart()
    if (/^(begin|start\s+transaction)\b/i.test(statement)) boundary = 'begin'
    else if (/^(commit|end|abort)\b/i.test(statement) || (/^rollback\b/i.test(statement) && !/^rollback\s+to\b/i.test(statement))) boundary = 'end'
  }
  if (boundary) return boundary
  for (const match of text.matchAll(RAW_WRITE)) {
    const verb = match[0].toLowerCase()
    if (!verb.startsWith('insert') && touchesWatched(match[1]?.toLowerCase(), 'all')) return 'write'
  }
  return undefined
}

/**
 * Wraps a PostgreSQL dialect so that every connection it hands out reports this process's own
 * writes to cached rows: a statement outside a transaction bumps `version` once it has run; one
 * inside a transaction bumps it when that transaction ends (commit or rollback alike: ending
 * without a change only costs a re-read). Reads and writes of other tables (a withdrawal, a
 * token's last use) leave the caches alone.
 */
export function trackCacheWrites(dialect: Dialect, version: CacheVersion): Dialect {
  const patched = new WeakSet<DatabaseConnection>()
  const track = (connection: DatabaseConnection): DatabaseConnection => {
    if (patched.has(connection)) return connection
    patched.add(connection)
    return reportWrites(connection, version)
  }
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: (): Driver => {
      const driver = dialect.createDriver()
      const acquire = driver.acquireConnection.bind(driver)
      driver.acquireConnection = async () => track(await acquire())
      return driver
    },
  }
}

/** Makes one connection report its writes to cached rows to `version` (see trackCacheWrites). */
function reportWrites(connection: DatabaseConnection, version: CacheVersion): DatabaseConnection {
  const execute = connection.executeQuery.bind(connection)
  let inTransaction = false
  let dirty = false
  // Once a statement has run (or failed): a write outside a transaction counts at once, one
  // inside it when the transaction ends.
  const ran = (kind: ReturnType<typeof classifyStatement>) => {
    if (kind === 'write') {
      if (inTransaction) dirty = true
      else version.changed()
    } else if (kind === 'end') {
      inTransaction = false
      if (dirty) version.changed()
      dirty = false
    }
  }
  connection.executeQuery = async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
    const kind = classifyStatement(query)
    if (kind === 'begin') inTransaction = true
    try {
      return await execute<R>(query)
    } finally {
      ran(kind)
    }
  }
  return connection
}

/** The listener's timings (config.ts says why). */
const LISTENER = config.store.listener

export interface ListenerOptions {
  /** First wait before reconnecting, doubled on each failure up to maxRetryMs. */
  minRetryMs?: number
  maxRetryMs?: number
  /** How often the idle connection is checked, so a silently dead one is noticed. */
  heartbeatMs?: number
  /**
   * For a listener on a URL of its own (one that bypasses a pooler): sends `NOTIFY
   * medpanel_cache_probe, token` through the store's own connections. The listener caches nothing
   * until it has heard that token, so a URL that reaches another database or server, where the
   * store's notifications never arrive, leaves the caches off rather than stale.
   */
  probe?: (token: string) => Promise<void>
  /** How long to wait for the probe's notification. */
  probeTimeoutMs?: number
}

/**
 * Whether the connection is a session of its own on the server: the backend that ran the LISTEN
 * is the one whose process id the server gave the connection at start-up. A pooler in transaction
 * mode (PgBouncer) hands its clients a key of its own, and may run each statement on another
 * server connection, so the two differ there.
 */
function ownSession(client: ListenClient, results: unknown): boolean {
  const list = Array.isArray(results) ? results : [results]
  const pid = (list.at(-1) as {rows?: {pid?: unknown}[]} | undefined)?.rows?.[0]?.pid
  const processID = (client as {processID?: unknown}).processID
  return typeof pid === 'number' && pid === processID
}

interface ListenClient {
  connect(): Promise<unknown>
  query(text: string): Promise<unknown>
  end(): Promise<void>
  on(event: string, listener: (...args: any[]) => void): unknown
  once(event: string, listener: (...args: any[]) => void): unknown
}

type PgModule = {Client: new (config: object) => ListenClient}

/** What a probe came to (Session.probe). */
type ProbeOutcome = 'heard' | 'unheard' | 'failed'

/** One listening connection's life: its client, the promise that it is gone, the probe tokens it heard. */
class Session {
  /** Resolves when the connection is lost, ended, or `end` is called. */
  readonly gone: Promise<void>
  /** Ends the session at once (close, or a failed heartbeat). */
  end!: () => void
  private readonly heard = new Set<string>()
  private onProbe: (() => void) | undefined

  constructor(
    readonly client: ListenClient,
    version: CacheVersion,
  ) {
    this.gone = new Promise<void>((resolve) => {
      this.end = resolve
      client.once('end', resolve)
      // A killed backend or a broken socket arrives as 'error' then 'end': both mean "lost".
      client.on('error', () => resolve())
    })
    client.on('notification', (message: {channel?: string; payload?: string}) => {
      if (message.channel === CACHE_CHANNEL) version.changed()
      else if (message.channel === PROBE_CHANNEL && message.payload) {
        this.heard.add(message.payload)
        this.onProbe?.()
      }
    })
  }

  /** Connects and runs `text` (the LISTENs); fails if the connection goes first. */
  connect(text: string): Promise<unknown> {
    return Promise.race([this.client.connect().then(() => this.client.query(text)), this.gone.then(() => Promise.reject(new Error('gone')))])
  }

  /**
   * Sends a token through the store and waits to hear it here: 'heard'; 'unheard' when it was
   * sent and this connection stayed up but nothing arrived in time; 'failed' when it could not
   * be sent or this connection went meanwhile (a session lost, not a verdict on the URL).
   */
  async probe(probe: (token: string) => Promise<void>, timeoutMs: number): Promise<ProbeOutcome> {
    const token = randomUUID()
    const arrived = new Promise<'heard' | 'unheard'>((resolve) => {
      const timer = setTimeout(() => resolve('unheard'), timeoutMs)
      this.onProbe = () => {
        if (!this.heard.has(token)) return
        clearTimeout(timer)
        resolve('heard')
      }
    })
    try {
      await probe(token)
    } catch {
      return 'failed'
    }
    return Promise.race([arrived, this.gone.then(() => 'failed' as const)])
  }

  /** An idle socket whose peer vanished without a word is only noticed when something is sent. */
  heartbeat(everyMs: number): ReturnType<typeof setInterval> {
    let answered = true
    const timer = setInterval(() => {
      if (!answered) return this.end()
      answered = false
      this.client.query('select 1').then(
        () => (answered = true),
        () => this.end(),
      )
    }, everyMs)
    timer.unref?.()
    return timer
  }
}

/** The Client class and URL to listen with: the URL's own, or one that picks among its hosts. */
function targetsFor(pg: PgModule, url: string): {Client: PgModule['Client']; base: string} {
  const parsed = parseTargets(url)
  if (!parsed) return {Client: pg.Client, base: url}
  const targets = targetsOf(pg as unknown as Parameters<typeof targetsOf>[0], parsed, config.store.hostProbeTimeoutMs)
  return {Client: targets.Client as unknown as PgModule['Client'], base: targets.base}
}

/** Ends a connection without waiting on it: a socket whose peer vanished may never finish a polite end. */
function drop(current: ListenClient): void {
  current.end().catch(() => undefined)
  const socket = (current as {connection?: {stream?: {destroy?: () => void}}}).connection?.stream
  setTimeout(() => socket?.destroy?.(), LISTENER.dropAfterMs).unref?.()
}

/** The loop of listenForChanges: one session after another, with growing waits between failures. */
class ChangeListener {
  private stopped = false
  /** A probe was heard on this URL once: it reaches the store's database. */
  private verified = false
  /** The current session, to end it at once on stop. */
  private session: Session | undefined
  private targets: {Client: PgModule['Client']; base: string} | undefined
  private wake: (() => void) | undefined
  private readonly minRetry: number
  private readonly maxRetry: number
  private readonly heartbeatMs: number

  constructor(
    private readonly url: string,
    private readonly version: CacheVersion,
    private readonly options: ListenerOptions,
  ) {
    this.minRetry = options.minRetryMs ?? LISTENER.minRetryMs
    this.maxRetry = options.maxRetryMs ?? LISTENER.maxRetryMs
    this.heartbeatMs = options.heartbeatMs ?? LISTENER.heartbeatMs
  }

  async run(): Promise<void> {
    let pg: PgModule
    try {
      pg = (await loadPg()).default as unknown as PgModule
    } catch {
      return
    }
    let delay = this.minRetry
    while (!this.stopped) {
      const wasUp = await this.listen(pg)
      if (this.stopped) break
      // After a connection that worked, try again soon; after a failed attempt, wait longer each time.
      delay = wasUp ? this.minRetry : Math.min(this.maxRetry, delay * 2)
      await this.sleep(delay / 2 + Math.random() * (delay / 2))
    }
  }

  /** Ends the loop: the wait or the session it is in ends at once. */
  async stop(loop: Promise<void>): Promise<void> {
    this.stopped = true
    this.wake?.()
    this.session?.end()
    await loop
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  /** One connection's life: resolves when it is gone, true if it listened. */
  private async listen(pg: PgModule): Promise<boolean> {
    // A URL of several hosts: the listener's connection finds the primary as the pool's do, and
    // after a failover the next session LISTENs on the new one (hosts.ts).
    this.targets ??= targetsFor(pg, this.url)
    const client = new this.targets.Client({
      connectionString: this.targets.base,
      application_name: listenerName(),
      keepAlive: true,
      connectionTimeoutMillis: LISTENER.connectTimeoutMs,
    })
    const session = new Session(client, this.version)
    this.session = session
    let timer: ReturnType<typeof setInterval> | undefined
    try {
      const backend = await session.connect(`LISTEN ${CACHE_CHANNEL}; ${this.options.probe ? `LISTEN ${PROBE_CHANNEL}; ` : ''}select pg_backend_pid() as pid`)
      if (!(await this.admitted(session, backend))) return false
      this.version.regained()
      timer = session.heartbeat(this.heartbeatMs)
      await session.gone
      return true
    } catch {
      // refused, timed out, or ended while connecting: the loop waits and tries again
      return false
    } finally {
      if (timer) clearInterval(timer)
      this.version.lost()
      this.session = undefined
      drop(client)
    }
  }

  /** Whether a connected session may turn the caches on; may also stop the listener for good. */
  private async admitted(session: Session, backend: unknown): Promise<boolean> {
    if (this.stopped) return false
    if (!ownSession(session.client, backend)) {
      // Through a pooler in transaction mode (PgBouncer), the LISTEN was made on a server
      // connection that now serves others: nothing would be heard. Stay without caches.
      this.stopped = true
      this.version.off = 'pooler'
      return false
    }
    if (!this.options.probe) return true
    const outcome = await session.probe(this.options.probe, this.options.probeTimeoutMs ?? LISTENER.probeTimeoutMs)
    // Not heard on a URL that never heard the store: it reaches another database, and caching on
    // it would serve stale rows, so the caches stay off for good. A URL that heard the store
    // before, or a probe that could not finish (the store or this connection went meanwhile), is
    // a session lost like any other: the loop tries again, without caching until a probe is heard.
    if (outcome === 'unheard' && !this.verified) {
      this.stopped = true
      this.version.off = 'unheard'
      return false
    }
    if (outcome !== 'heard') return false
    this.verified = true
    return true
  }
}

/**
 * Keeps one connection (outside the request pool) LISTENing on CACHE_CHANNEL and feeds `version`:
 * a notification bumps it, a lost connection makes it undefined, a new LISTEN makes it readable
 * again. Reconnects with growing waits and never throws; the returned function ends it.
 */
export function listenForChanges(url: string, version: CacheVersion, options: ListenerOptions = {}): () => Promise<void> {
  const listener = new ChangeListener(url, version, options)
  const loop = listener.run()
  return () => listener.stop(loop)
}
