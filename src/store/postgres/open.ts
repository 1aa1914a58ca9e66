import type {Dialect} from 'kysely'
import {PostgresDialect} from 'kysely'
import {config} from '../../config.js'
import {type HostSelector, NoTargetError, parseTargets, targetsOf} from './hosts.js'
import {loadPg} from './load.js'
import {statementName} from './statements.js'

/** Connections per process when the operator names none: enough for 2-4 cores of requests. */
export const DEFAULT_POOL_SIZE = 10

export interface PostgresHandle {
  dialect: Dialect
  /** A printable name of the database: the URL without its password. */
  where: string
  /** The pool's connections now (for the metrics). */
  pool: () => {total: number; idle: number; waiting: number}
  /** With a URL of several hosts (postgres/hosts.ts): which one connections go to. */
  selector?: HostSelector
}

/**
 * A PostgreSQL store's dialect: Kysely's PostgresDialect on a `pg` pool, with a server-side
 * cursor class for streamed reads. `pg` is loaded here, on first use, so SQLite users never load
 * it. 64-bit integers (counts, sums, identity keys) come back as numbers when they fit in one
 * exactly, and as bigint otherwise, never as a rounded number.
 */
export async function openPostgres(url: string, options: {poolSize?: number} = {}): Promise<PostgresHandle> {
  const [{default: pg}, {default: Cursor}] = await Promise.all([loadPg(), import('pg-cursor')])
  pg.types.setTypeParser(pg.types.builtins.INT8, (text: string) => {
    const value = Number(text)
    return Number.isSafeInteger(value) ? value : BigInt(text)
  })
  // Several hosts, or target_session_attrs: connections find their server themselves (hosts.ts).
  const parsed = parseTargets(url)
  const targets = parsed && targetsOf(pg, parsed, config.store.hostProbeTimeoutMs)
  const pool = new pg.Pool({connectionString: targets?.base ?? url, max: options.poolSize ?? DEFAULT_POOL_SIZE, ...(targets ? {Client: targets.Client} : {})})
  // An idle connection the server dropped must not take the process down with it.
  pool.on('error', () => undefined)
  // Nor may one in use: pg emits 'error' on a checked-out client whose server goes away (a
  // restart's admin_shutdown, a dropped socket), and the pool listens only while it is idle. The
  // statement in flight fails on its own promise (answered 503, store/failure.ts), and the pool
  // discards the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined))
  pool.on('connect', namedStatements)
  const counts = () => ({total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max})
  // A connection that found its host no longer fits (a primary demoted since it was chosen) fails
  // before anything is sent; the next asks every host again, as many times as there are hosts.
  const tries = parsed?.hosts.length ?? 1
  const connect = async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await pool.connect()
      } catch (error) {
        if (!(error instanceof NoTargetError) || attempt >= tries) throw error
      }
    }
  }
  const dialect = new PostgresDialect({pool: targets ? {connect, end: () => pool.end()} : pool, cursor: Cursor})
  return {dialect, where: printableUrl(url), pool: counts, ...(targets ? {selector: targets.selector} : {})}
}

/**
 * Makes a new connection send the hot statements (postgres/statements.ts) as named prepared
 * statements: Kysely calls `query(text, values)`, which pg sends unnamed, parsed and planned
 * again on every call. pg remembers per connection which names it has prepared there.
 *
 * Only on a session of its own on the server: behind a pooler in transaction mode (PgBouncer's
 * `pool_mode = transaction`) consecutive statements of one connection may run on different
 * server sessions, where a name prepared on one is missing (or, from another client, already
 * taken) on the next. Before its first hot statement, a connection compares the backend the
 * server says it is talking to (`pg_backend_pid()`) with the one the connection was handed when
 * it opened (its cancel key); a pooler hands out a key of its own, so they differ, and that
 * connection sends everything unnamed. Either way the answers are the same.
 */
function namedStatements(client: import('pg').PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>
  let session: Promise<boolean> | undefined
  client.query = ((...args: unknown[]) => {
    const [text, values] = args
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) && values.length > 0 ? statementName(text) : undefined
    if (!name) return query(...args)
    session ??= query('select pg_backend_pid() as pid').then(
      (result) => (result as {rows: {pid: number}[]}).rows[0]?.pid === (client as {processID?: number}).processID,
      () => false,
    )
    return session.then((own) => (own ? query({name, text, values}) : query(text, values)))
  }) as typeof client.query
}

export function printableUrl(url: string): string {
  // Several hosts (h1:5432,h2:5433) are no WHATWG URL: only the password is taken out.
  if (url.split('/')[2]?.includes(',') || /[?&]target_session_attrs=/.test(url)) return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/i, '$1:***@')
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'the PostgreSQL database'
  }
}
