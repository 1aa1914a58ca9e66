import {once} from 'node:events'
import {connect, type Socket} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {startCli, tempDir, type RunningCli} from '../helpers/cli.js'
import {scaledBound, timeOf} from '../helpers/timing.js'

/** A client that sends a request one byte a second, as a slowloris does, and never finishes. */
function trickle(url: URL, onClose: () => void): {socket: Socket; stop: () => void} {
  const socket = connect(Number(url.port), url.hostname)
  const request = `GET /healthz HTTP/1.1\r\nHost: ${url.host}\r\nX-Padding: ${'a'.repeat(500)}\r\n`
  let sent = 0
  const timer = setInterval(() => {
    if (sent < request.length && !socket.destroyed) socket.write(request[sent++]!)
  }, 1000)
  socket.on('error', () => undefined)
  socket.on('close', () => {
    clearInterval(timer)
    onClose()
  })
  return {
    socket,
    stop: () => {
      clearInterval(timer)
      socket.destroy()
    },
  }
}

describe('slow clients', () => {
  let server: RunningCli
  beforeAll(async () => {
    server = await startCli(['serve', '--port', '0', '--no-worker', '--db', join(tempDir(), 'slow.db')])
  })
  afterAll(async () => server?.stop())

  it('cuts off clients that trickle their headers, and answers everyone else meanwhile', async () => {
    const url = new URL(server.url)
    // One request alone, timed: the baseline for how late this machine, as loaded as it is now,
    // may be on top of the server's own deadline.
    const alone = await timeOf(async () => expect((await fetch(`${server.url}/healthz`)).status).toBe(200))
    const started = Date.now()
    const closedAfter: number[] = []
    const slow = Array.from({length: 200}, () => trickle(url, () => closedAfter.push(Date.now() - started)))
    try {
      // Once every slow socket is connected, the server holds 200 unfinished requests.
      await Promise.all(slow.map(({socket}) => (socket.connecting ? once(socket, 'connect') : undefined)))
      // A normal request is answered while they are all still open, not once the 10 s header
      // deadline frees the server.
      const res = await fetch(`${server.url}/healthz`)
      expect(res.status).toBe(200)
      expect(closedAfter, 'slow sockets closed before the answer came').toEqual([])
      // The header deadline (10 s, checked every second) closes every one of them; what a loaded
      // machine adds on top scales with the baseline (2 cores running a whole suite under Deno
      // closed the last one at 14.01 s).
      const latest = 11_000 + scaledBound(6_000, alone)
      await new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`only ${closedAfter.length} of 200 slow sockets were closed`)), latest + 3_000)
        const poll = setInterval(() => {
          if (closedAfter.length === slow.length) {
            clearInterval(poll)
            clearTimeout(deadline)
            resolve()
          }
        }, 100)
      })
      // Closed by the deadline, not left open: none before it, and none long after it.
      expect(Math.max(...closedAfter)).toBeLessThan(latest)
      expect(Math.min(...closedAfter)).toBeGreaterThan(9_000)
    } finally {
      for (const s of slow) s.stop()
    }
  })
})
