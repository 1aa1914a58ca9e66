import {randomUUID} from 'node:crypto'
import type {CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult} from 'kysely'
import {config} from '../../config.js'
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
    const execute = connection.executeQuery.bind(connection)
    let inTransaction = false
    let dirty = false
    connection.executeQuery = async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      const kind = classifyStatement(query)
      if (kind === 'begin') inTransaction = true
      try {
        return await execute<R>(query)
      } finally {
        if (kind === 'write') {
          if (inTransaction) dirty = true
          else version.changed()
        } else if (kind === 'end') {
          inTransaction = false
          if (dirty) version.changed()
          dirty = false
        }
      }
    }
    return connection
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

/**
 * Keeps one connection (outside the request pool) LISTENing on CACHE_CHANNEL and feeds `version`:
 * a notification bumps it, a lost connection makes it undefined, a new LISTEN makes it readable
 * again. Reconnects with growing waits and never throws; the returned function ends it.
 */
export function listenForChanges(url: string, version: CacheVersion, options: ListenerOptions = {}): () => Promise<void> {
  const minRetry = options.minRetryMs ?? LISTENER.minRetryMs
  const maxRetry = options.maxRetryMs ?? LISTENER.maxRetryMs
  const heartbeat = options.heartbeatMs ?? LISTENER.heartbeatMs
  let stopped = false
  /** A probe was heard on this URL once: it reaches the store's database. */
  let verified = false
  /** Ends the current connection's session at once (close, or a failed heartbeat). */
  let client: {end: () => void} | undefined
  let wake: (() => void) | undefined

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })

  /** Ends a connection without waiting on it: a socket whose peer vanished may never finish a polite end. */
  const drop = (current: ListenClient) => {
    current.end().catch(() => undefined)
    const socket = (current as {connection?: {stream?: {destroy?: () => void}}}).connection?.stream
    setTimeout(() => socket?.destroy?.(), LISTENER.dropAfterMs).unref?.()
  }

  /** One connection's life: resolves when it is gone (true if it listened). */
  const session = async (pg: {Client: new (config: object) => ListenClient}): Promise<boolean> => {
    const current = new pg.Client({connectionString: url, application_name: listenerName(), keepAlive: true, connectionTimeoutMillis: LISTENER.connectTimeoutMs})
    let lose!: () => void
    const gone = new Promise<void>((resolve) => {
      lose = resolve
      current.once('end', resolve)
      // A killed backend or a broken socket arrives as 'error' then 'end': both mean "lost".
      current.on('error', () => resolve())
    })
    client = {end: lose}
    const heard = new Set<string>()
    let onProbe: (() => void) | undefined
    current.on('notification', (message: {channel?: string; payload?: string}) => {
      if (message.channel === CACHE_CHANNEL) version.changed()
      else if (message.channel === PROBE_CHANNEL && message.payload) {
        heard.add(message.payload)
        onProbe?.()
      }
    })
    let timer: ReturnType<typeof setInterval> | undefined
    let listened = false
    /**
     * Sends a token through the store and waits to hear it here: 'heard'; 'unheard' when it was
     * sent and this connection stayed up but nothing arrived in time; 'failed' when it could not
     * be sent or this connection went meanwhile (a session lost, not a verdict on the URL).
     */
    const probed = async (probe: (token: string) => Promise<void>, timeoutMs: number): Promise<'heard' | 'unheard' | 'failed'> => {
      const token = randomUUID()
      const arrived = new Promise<'heard' | 'unheard'>((resolve) => {
        const timer = setTimeout(() => resolve('unheard'), timeoutMs)
        onProbe = () => {
          if (!heard.has(token)) return
          clearTimeout(timer)
          resolve('heard')
        }
      })
      try {
        await probe(token)
      } catch {
        return 'failed'
      }
      return Promise.race([arrived, gone.then(() => 'failed' as const)])
    }
    try {
      const backend = await Promise.race([
        current.connect().then(() => current.query(`LISTEN ${CACHE_CHANNEL}; ${options.probe ? `LISTEN ${PROBE_CHANNEL}; ` : ''}select pg_backend_pid() as pid`)),
        gone.then(() => Promise.reject(new Error('gone'))),
      ])
      if (stopped) return false
      if (!ownSession(current, backend)) {
        // Through a pooler in transaction mode (PgBouncer), the LISTEN was made on a server
        // connection that now serves others: nothing would be heard. Stay without caches.
        stopped = true
        version.off = 'pooler'
        return false
      }
      if (options.probe) {
        const outcome = await probed(options.probe, options.probeTimeoutMs ?? LISTENER.probeTimeoutMs)
        // Not heard on a URL that never heard the store: it reaches another database, and
        // caching on it would serve stale rows, so the caches stay off for good. A URL that
        // heard the store before, or a probe that could not finish (the store or this
        // connection went meanwhile), is a session lost like any other: the loop tries again,
        // without caching until a probe is heard.
        if (outcome === 'unheard' && !verified) {
          stopped = true
          version.off = 'unheard'
          return false
        }
        if (outcome !== 'heard') return false
        verified = true
      }
      version.regained()
      listened = true
      // An idle socket whose peer vanished without a word is only noticed when something is sent.
      let answered = true
      timer = setInterval(() => {
        if (!answered) return lose()
        answered = false
        current.query('select 1').then(
          () => (answered = true),
          () => lose(),
        )
      }, heartbeat)
      timer.unref?.()
      await gone
    } catch {
      // refused, timed out, or ended while connecting: the loop waits and tries again
    } finally {
      if (timer) clearInterval(timer)
      version.lost()
      client = undefined
      drop(current)
    }
    return listened
  }

  const loop = (async () => {
    let pg: {Client: new (config: object) => ListenClient}
    try {
      pg = (await loadPg()).default as unknown as typeof pg
    } catch {
      return
    }
    let delay = minRetry
    while (!stopped) {
      const wasUp = await session(pg)
      if (stopped) break
      // After a connection that worked, try again soon; after a failed attempt, wait longer each time.
      delay = wasUp ? minRetry : Math.min(maxRetry, delay * 2)
      await sleep(delay / 2 + Math.random() * (delay / 2))
    }
  })()

  return async () => {
    stopped = true
    wake?.()
    client?.end()
    await loop
  }
}
