import {printable} from '../lib/printable.js'
import {timestamp, type LogFormat} from '../lib/log.js'
import type {Context, MiddlewareHandler} from 'hono'
import {matchedRoutes} from 'hono/route'
import {randomUUID} from 'node:crypto'
import {closeSync, openSync, writeSync} from 'node:fs'
import {AppError} from '../errors.js'
import {carriesRequestId, requestHeader} from './fast.js'
import {clientAddress} from './client-address.js'
import type {HttpEnv} from './env.js'

/** The path of a request URL exactly as sent (still percent-encoded), without the query. */
function rawPath(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const end = url.indexOf('?', start)
  return end < 0 ? url.slice(start) : url.slice(start, end)
}

/** Log lines gathered and written together; `flush` writes what is pending now. */
interface Batch {
  add(line: string): void
  flush(): void
}

/**
 * Lines written once per event-loop turn instead of once per request: under load that turns
 * hundreds of write syscalls into one. Whatever is pending is written synchronously (`atExit`)
 * when the process exits, so a line logged is a line kept, however the process ends.
 */
function batched(write: (text: string) => void, atExit: (text: string) => void): Batch {
  let pending: string[] = []
  let scheduled = false
  const take = (): string | undefined => {
    if (pending.length === 0) return undefined
    const text = `${pending.join('\n')}\n`
    pending = []
    return text
  }
  const flush = () => {
    const text = take()
    if (text !== undefined) write(text)
  }
  process.once('exit', () => {
    const text = take()
    if (text !== undefined) atExit(text)
  })
  return {
    add: (line) => {
      pending.push(line)
      if (!scheduled) {
        scheduled = true
        setImmediate(() => {
          scheduled = false
          flush()
        })
      }
    },
    flush,
  }
}

let stderrSink: Batch | undefined

/** The shared stderr sink for log lines (batched per event-loop turn). */
export function stderrLog(line: string): void {
  stderrSink ??= batched(
    (text) => process.stderr.write(text),
    (text) => writeSync(2, text),
  )
  stderrSink.add(line)
}

/** An access log in a file of its own (`serve --access-log`), which logrotate can move away. */
export interface LogFile {
  readonly path: string
  write(line: string): void
  /**
   * Writes what is pending to the file open now, closes it and opens `path` afresh (SIGHUP after
   * logrotate renamed it). Every line lands in exactly one of the two files: lines are appended
   * with synchronous writes on this one thread, so none is in flight while the file changes.
   */
  reopen(): void
}

/**
 * Opens `path` for appending (created 0640 when missing). Writes are synchronous, once per
 * event-loop turn, as stderr's are when it is a file; a file that cannot be opened is an Error.
 */
export function logFile(path: string): LogFile {
  const open = () => {
    try {
      return openSync(path, 'a', 0o640)
    } catch (error) {
      throw new AppError('bad_request', `cannot open the access log ${path}: ${(error as Error).message}`)
    }
  }
  let fd = open()
  const batch = batched(
    (text) => writeSync(fd, text),
    (text) => writeSync(fd, text),
  )
  return {
    path,
    write: batch.add,
    reopen: () => {
      // Opened before the old one closes: a path that cannot be opened keeps the old file.
      const next = open()
      batch.flush()
      closeSync(fd)
      fd = next
    },
  }
}

/** A caller's own X-Request-Id is kept when it is a sane token; otherwise a new UUID is made. */
const INCOMING_ID = /^[\w\-.:]{1,128}$/

/** The id of a request: the caller's X-Request-Id when it is a sane token, else a new UUID. */
export function requestIdOf(incoming: string | undefined): string {
  return incoming !== undefined && INCOMING_ID.test(incoming) ? incoming : randomUUID()
}

/**
 * The route template Hono matched (`/balance/:key/:id/withdrawals`), never the path with its ids:
 * the last matched route that is not a wildcard middleware (`*`, `/balance/*`). A path no route
 * serves matches only those, and has none.
 */
export function matchedRoute(c: Context): string | null {
  let routes: ReturnType<typeof matchedRoutes>
  try {
    routes = matchedRoutes(c)
  } catch {
    return null
  }
  for (let i = routes.length - 1; i >= 0; i--) {
    const path = routes[i]!.path
    if (!path.includes('*')) return path
  }
  return null
}

export interface AccessLogOptions {
  /** `text` (the default): the readable line; `json`: one object per request (docs/operations.md). */
  format?: LogFormat
  /** The interface letter of a request, from its route template, else its raw path; null for none. */
  interfaceOf?: (routeOrPath: string) => string | null
}

/** What one access-log line tells of a request. */
export interface RequestRecord {
  method: string
  /** The path exactly as sent (still percent-encoded), without the query. */
  path: string
  /** The route template that answered; read only by the JSON format (null: none matched). */
  route: string | null
  status: number
  ms: number
  id: string
  /** The caller's address (clientAddress), undefined where the runtime does not tell. */
  address: string | undefined
}

/**
 * The access log's line of a request, in `format`: the one spelling both the app's middleware
 * (accessLog) and the front door (http/front-door.ts) write.
 */
export function requestLine(options: AccessLogOptions = {}): (record: RequestRecord) => string {
  const interfaceOf = options.interfaceOf ?? (() => null)
  return options.format === 'json'
    ? (record) =>
        JSON.stringify({
          time: timestamp(),
          level: record.status >= 500 ? 'error' : 'info',
          msg: 'request',
          request_id: record.id,
          interface: interfaceOf(record.route ?? record.path),
          route: record.route,
          method: record.method,
          status: record.status,
          duration_ms: Math.round(record.ms * 10) / 10,
          address: record.address ?? null,
        })
    : (record) => {
        // The raw path as it came (never the decoded one, where %0a would start a forged log line),
        // with anything unprintable escaped all the same.
        const raw = record.path
        const path = printable(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw)
        return `${timestamp()} ${record.method} ${path} ${record.status} ${record.ms.toFixed(1)}ms id=${record.id} addr=${record.address ?? '-'}`
      }
}

/**
 * The request id and the access log in one middleware (every middleware layer costs throughput
 * on hot routes): sets `requestId` and the X-Request-Id answer header, then writes one line per
 * request: time, method, path, status, milliseconds, id, and the caller's address (the one the
 * guessing limits count, so a log line and a 429 name the same caller). In the JSON format the
 * path gives way to the route template and the interface, so no id in a path reaches the log.
 */
export function accessLog(write: (line: string) => void = stderrLog, options: AccessLogOptions = {}): MiddlewareHandler<HttpEnv> {
  const line = requestLine(options)
  const json = options.format === 'json'
  return function logRequest(c, next) {
    const started = performance.now()
    const id = requestIdOf(requestHeader(c, 'x-request-id'))
    c.set('requestId', id)
    // A plain .then rather than an async function: one promise less on every request.
    return next().then(() => {
      // Added after the handler (not with c.header before it) so fast responses stay plain objects.
      if (!carriesRequestId(c.res)) {
        try {
          c.res.headers.set('X-Request-Id', id)
        } catch {
          // a response with immutable headers goes out without the id; the log line still has it
        }
      }
      const ms = performance.now() - started
      write(line({method: c.req.method, path: rawPath(c.req.url), route: json ? matchedRoute(c) : null, status: c.res.status, ms, id, address: clientAddress(c)}))
    })
  }
}
