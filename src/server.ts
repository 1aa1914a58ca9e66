import {serve as nodeServe} from '@hono/node-server'
import type {Server} from 'node:http'
import {AppError} from './errors.js'
import {config} from './config.js'

export interface RunningServer {
  url: string
  port: number
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes. */
  close(graceMs?: number): Promise<void>
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
export function startServer(app: {fetch: (request: Request) => Response | Promise<Response>}, options: {port: number; host: string}): Promise<RunningServer> {
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
        close: (graceMs = SERVER_LIMITS.closeGraceMs) =>
          new Promise<void>((done) => {
            const force = setTimeout(() => server.closeAllConnections(), graceMs)
            force.unref()
            server.close(() => {
              clearTimeout(force)
              done()
            })
            server.closeIdleConnections()
          }),
      })
    })
  })
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      resolve(signal)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
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
