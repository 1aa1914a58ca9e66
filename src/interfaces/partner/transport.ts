import {createHmac} from 'node:crypto'

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

/** `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`, as partners verify it. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')
  return `t=${unixSeconds},v1=${mac}`
}

export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}
