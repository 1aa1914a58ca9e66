import type {MiddlewareHandler} from 'hono'
import {writeSync} from 'node:fs'

/**
 * Lines for stderr, written once per event-loop turn instead of once per request: under load
 * that turns hundreds of write syscalls into one. Whatever is pending is written synchronously
 * when the process exits.
 */
function batchedStderr(): (line: string) => void {
  let pending: string[] = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const text = pending.join('\n') + '\n'
    pending = []
    process.stderr.write(text)
  }
  process.once('exit', () => {
    if (pending.length) writeSync(2, pending.join('\n') + '\n')
    pending = []
  })
  return (line) => {
    pending.push(line)
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

let stderrSink: ((line: string) => void) | undefined

/** The shared stderr sink for log lines (batched per event-loop turn). */
export function stderrLog(line: string): void {
  stderrSink ??= batchedStderr()
  stderrSink(line)
}

/** One line per request: time, method, path, status, milliseconds, request id. */
export function accessLog(write: (line: string) => void = stderrLog): MiddlewareHandler {
  return async function logRequest(c, next) {
    const started = performance.now()
    await next()
    const ms = (performance.now() - started).toFixed(1)
    const path = c.req.path.length > 200 ? c.req.path.slice(0, 200) + '…' : c.req.path
    write(`${new Date().toISOString()} ${c.req.method} ${path} ${c.res.status} ${ms}ms id=${c.get('requestId') ?? '-'}`)
  }
}
