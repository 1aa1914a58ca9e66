import {serve as nodeServe} from '@hono/node-server'
import type {IncomingMessage, Server, ServerResponse} from 'node:http'
import type {Socket} from 'node:net'
import {AppError} from './errors.js'
import {config} from './config.js'
import type {FrontDoor} from './http/front-door.js'

export interface RunningServer {
  url: string
  port: number
  /**
   * Stops accepting, lets requests in flight finish (up to `graceMs`; Infinity: as long as they
   * take), then closes. Answers sent meanwhile say `Connection: close`, so no client sends another
   * request on a connection that is about to go.
   */
  close(graceMs?: number): Promise<void>
  /** Requests read and not yet answered in full (their bodies sent), now. */
  inFlight(): number
}

/**
 * Time limits set on purpose, so that clients sending slowly (a slowloris holding sockets open a
 * byte at a time) cannot starve everyone else: the request line and headers must arrive within
 * 10 s and the whole request within 30 s (no medpanel request body is large), checked every
 * second; headers are capped at 16 KiB. Idle keep-alive connections last 65 s, longer than the
 * usual load balancer's 60 s, so the balancer closes first and never reuses a closed socket.
 */
export const SERVER_LIMITS = config.http.server

/** Listens on host:port (port 0 picks a free one) and resolves once the socket is bound. */
export function startServer(app: {fetch: (request: Request) => Response | Promise<Response>; front?: FrontDoor}, options: {port: number; host: string}): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = nodeServe({
      fetch: app.fetch,
      port: options.port,
      hostname: options.host,
      serverOptions: {
        headersTimeout: SERVER_LIMITS.headersTimeoutMs,
        requestTimeout: SERVER_LIMITS.requestTimeoutMs,
        connectionsCheckingInterval: SERVER_LIMITS.checkEveryMs,
        maxHeaderSize: SERVER_LIMITS.maxHeaderSize,
      },
    }) as Server
    server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs
    const connections = new ConnectionsClosing(server, app.front)
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(listenProblem(error, options) ?? error)
    })
    server.once('listening', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : options.port
      const host = options.host.includes(':') ? `[${options.host}]` : options.host
      resolve({
        url: `http://${host}:${port}`,
        port,
        inFlight: () => connections.inFlight,
        close: (graceMs = SERVER_LIMITS.closeGraceMs) => {
          connections.closing()
          return closeGracefully(server, graceMs)
        },
      })
    })
  })
}

/**
 * Counts the requests in flight, and once the server is closing makes each connection end as soon
 * as the answer it owes is written:
 *
 * - the last answer each connection still owes (the request in flight when the signal came, its
 *   body still arriving perhaps) is marked the connection's last: it says `Connection: close`,
 *   and Node ends the socket once it is written. An answer whose head had already gone out saying
 *   keep-alive ends its socket once written instead;
 * - a request that arrives on a connection after it was given its last answer (pipelined behind
 *   it) is never handed to the app: nothing runs that could not be answered, and the client, told
 *   the connection closes, sends it again elsewhere (RFC 9112 section 9.6);
 * - a request that arrives on a connection with nothing owed is answered, with `Connection: close`.
 *
 * Idle connections are ended by closeGracefully. So no socket outlives its last answer, and serve
 * exits as soon as the last request in flight is answered, not when the keep-alive timer runs out.
 */
class ConnectionsClosing {
  inFlight = 0
  private isClosing = false
  /** The answers each connection owes, in order. */
  private readonly owed = new Map<Socket, ServerResponse[]>()
  /** Connections given their last answer. */
  private readonly ending = new WeakSet<Socket>()

  constructor(server: Server, front: FrontDoor | undefined) {
    // The app's own listener (@hono/node-server's) runs only for requests that will be answered,
    // and only for those its front door (http/front-door.ts) leaves to it.
    const app = server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[]
    server.removeAllListeners('request')
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (!this.admit(request, response) || front?.(request, response)) return
      for (const listener of app) listener.call(server, request, response)
    })
  }

  /** Counts the request; answers whether the app is to run it. */
  private admit(request: IncomingMessage, response: ServerResponse): boolean {
    const socket = request.socket
    if (this.isClosing && this.ending.has(socket)) {
      // Pipelined behind the connection's last answer: dropped unread with the socket.
      request.resume()
      return false
    }
    this.inFlight++
    const owed = this.owed.get(socket) ?? []
    owed.push(response)
    this.owed.set(socket, owed)
    if (this.isClosing) this.lastOn(socket, response)
    response.once('close', () => {
      this.inFlight--
      const left = (this.owed.get(socket) ?? []).filter((other) => other !== response)
      if (left.length > 0) this.owed.set(socket, left)
      else this.owed.delete(socket)
    })
    return true
  }

  /** Makes `response` the last answer on `socket`. */
  private lastOn(socket: Socket, response: ServerResponse): void {
    this.ending.add(socket)
    if (!response.headersSent) {
      response.shouldKeepAlive = false
      return
    }
    // Its head already said keep-alive: the socket ends once the answer is written.
    if (response.writableFinished) socket.end()
    else response.once('finish', () => socket.end())
  }

  /** From now on every connection ends after the answer it owes. */
  closing(): void {
    this.isClosing = true
    for (const [socket, owed] of this.owed) {
      const last = owed.at(-1)
      if (last !== undefined) this.lastOn(socket, last)
    }
  }
}

/** Stops taking connections and ends the idle ones; those still open after `graceMs` are closed too. */
function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((done) => {
    // setTimeout takes Infinity as 1 ms: no timer at all when there is no limit.
    const force = Number.isFinite(graceMs) ? setTimeout(() => server.closeAllConnections(), graceMs) : undefined
    force?.unref()
    server.close(() => {
      clearTimeout(force)
      done()
    })
    server.closeIdleConnections()
  })
}

/** Resolves on the first SIGINT or SIGTERM; a second one then ends the process as by default. */
export function untilSignal(): Promise<NodeJS.Signals> {
  const signals = stopSignals()
  return signals.first.then((signal) => {
    signals.dispose()
    return signal
  })
}

export interface StopSignals {
  /** The first SIGINT or SIGTERM. */
  readonly first: Promise<NodeJS.Signals>
  /** Every later SIGINT or SIGTERM goes to `handler` (none set: it is ignored). */
  onAnother(handler: (signal: NodeJS.Signals) => void): void
  /** Stops listening: the next SIGINT or SIGTERM does what it does by default. */
  dispose(): void
}

/**
 * Listens for SIGINT and SIGTERM for the whole life of a service: the first one asks it to stop,
 * later ones go to `onAnother` (serve's "stop at once"). Listening from the start means no stop
 * signal ever gets Node's default (an exit with no cleanup), however early or late it comes.
 */
export function stopSignals(): StopSignals {
  let another: ((signal: NodeJS.Signals) => void) | undefined
  let seen = false
  let resolveFirst: (signal: NodeJS.Signals) => void = () => {}
  const first = new Promise<NodeJS.Signals>((resolve) => {
    resolveFirst = resolve
  })
  const onSignal = (signal: NodeJS.Signals) => {
    if (!seen) {
      seen = true
      resolveFirst(signal)
    } else another?.(signal)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return {
    first,
    onAnother: (handler) => {
      another = handler
    },
    dispose: () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    },
  }
}

/** Why the socket could not be opened, in the operator's terms; undefined for what needs a stack. */
function listenProblem(error: NodeJS.ErrnoException, options: {port: number; host: string}): AppError | undefined {
  switch (error.code) {
    case 'EADDRINUSE':
      return new AppError('bad_request', `port ${options.port} on ${options.host} is already in use; pick another with --port`)
    case 'EADDRNOTAVAIL':
    // Deno reports an address this machine does not have as EINVAL.
    case 'EINVAL':
      return new AppError(
        'bad_request',
        `cannot listen on ${options.host}: no network interface of this machine has that address; give one it has with --host (127.0.0.1, or 0.0.0.0 for all)`,
      )
    case 'EACCES':
      return new AppError('bad_request', `not allowed to listen on port ${options.port} (ports below 1024 need privileges); pick another with --port`)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new AppError('bad_request', `cannot listen on ${options.host}: the name does not resolve to an address of this machine; give an IP address with --host`)
    default:
      return undefined
  }
}
