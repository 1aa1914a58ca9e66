import {createHmac} from 'node:crypto'
import {printable} from '../../lib/printable.js'

/** One HTTP request to a partner, fully built (URL, headers, body). */
export interface PartnerRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
}

export interface PartnerResponse {
  status: number
  /** The answer's body as text. */
  body: string
}

/**
 * How deliveries reach partners. The worker only sees this interface, so tests swap in a fake
 * and production uses fetch. A transport throws on network failure or timeout.
 */
export interface Transport {
  send(request: PartnerRequest, timeoutMs: number): Promise<PartnerResponse>
}

/**
 * Node's global fetch (undici) keeps connections to each origin alive and reuses them, so a burst
 * of member chunks to one partner runs over a handful of sockets.
 */
export const fetchTransport: Transport = {
  async send(request, timeoutMs) {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    })
    // Reading the body to its end hands the socket back to the pool.
    const text = await response.text()
    return {status: response.status, body: text}
  },
}

/**
 * Deno's fetch reports a failed connection in its message alone ("…tcp connect error: Connection
 * refused (os error 111)"), where Node's gives `cause.code`. Both become the same errno name, so
 * an operator reads the same reason on either runtime.
 */
const DENO_NETWORK_ERRORS: [RegExp, string][] = [
  [/connection refused/i, 'ECONNREFUSED'],
  [/connection reset/i, 'ECONNRESET'],
  [/timed out/i, 'ETIMEDOUT'],
  [/dns error|failed to lookup address|name or service not known/i, 'ENOTFOUND'],
  [/network is unreachable/i, 'ENETUNREACH'],
  [/no route to host/i, 'EHOSTUNREACH'],
]

/** Why a request to a partner failed without an answer, in a few words; `timeout` for aborts. */
export function networkFailure(error: unknown): {timeout: boolean; reason: string} {
  const e = error as Error & {cause?: {code?: string; message?: string}}
  if (e?.name === 'TimeoutError') return {timeout: true, reason: 'timeout'}
  if (e?.cause?.code) return {timeout: false, reason: printable(e.cause.code)}
  const text = e?.cause?.message ?? e?.message ?? String(error)
  for (const [pattern, code] of DENO_NETWORK_ERRORS) if (pattern.test(text)) return {timeout: false, reason: code}
  return {timeout: false, reason: printable(text)}
}

/** `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`, as partners verify it. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}
