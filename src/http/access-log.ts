import type {MiddlewareHandler} from 'hono'

/** One line per request on the given sink (stderr by default): time, method, path, status, ms, id. */
export function accessLog(write: (line: string) => void = (line) => process.stderr.write(line + '\n')): MiddlewareHandler {
  return async function logRequest(c, next) {
    const started = performance.now()
    await next()
    const ms = (performance.now() - started).toFixed(1)
    const path = c.req.path.length > 200 ? c.req.path.slice(0, 200) + '…' : c.req.path
    write(`${new Date().toISOString()} ${c.req.method} ${path} ${c.res.status} ${ms}ms id=${c.get('requestId') ?? '-'}`)
  }
}
