import {createConnection, createServer, type Socket} from 'node:net'

/**
 * A loopback TCP relay to one target port, which a test can cut: every relayed connection is
 * reset and new ones are closed as they arrive, until it is restored. It stands for a network
 * that fails one connection of a process while the process's others, made straight to the
 * target, go on working.
 */
export interface TcpProxy {
  port: number
  /** Relayed connections open right now. */
  open: () => number
  cut: () => void
  restore: () => void
  close: () => Promise<void>
}

export async function tcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let cut = false
  const server = createServer((inbound) => {
    if (cut) {
      inbound.resetAndDestroy()
      return
    }
    const outbound = createConnection({port: targetPort, host: targetHost})
    for (const socket of [inbound, outbound]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => undefined)
    }
    inbound.on('close', () => outbound.destroy())
    outbound.on('close', () => inbound.destroy())
    inbound.pipe(outbound)
    outbound.pipe(inbound)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  return {
    port,
    open: () => sockets.size / 2,
    cut: () => {
      cut = true
      for (const socket of sockets) socket.resetAndDestroy()
    },
    restore: () => {
      cut = false
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
