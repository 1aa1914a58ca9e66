import {serve as nodeServe} from '@hono/node-server'
import type {Server} from 'node:http'
import {AppError} from './errors.js'

export interface RunningServer {
  url: string
  port: number
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes. */
  close(graceMs?: number): Promise<void>
}

/** Listens on host:port (port 0 picks a free one) and resolves once the socket is bound. */
export function startServer(app: {fetch: (request: Request) => Response | Promise<Response>}, options: {port: number; host: string}): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = nodeServe({fetch: app.fetch, port: options.port, hostname: options.host}) as Server
    server.keepAliveTimeout = 65_000
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new AppError('bad_request', `port ${options.port} on ${options.host} is already in use; pick another with --port`)
          : error,
      )
    })
    server.once('listening', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : options.port
      const host = options.host.includes(':') ? `[${options.host}]` : options.host
      resolve({
        url: `http://${host}:${port}`,
        port,
        close: (graceMs = 10_000) =>
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
