import {createHash, timingSafeEqual} from 'node:crypto'
import type {Context, Handler} from 'hono'
import {AppError} from '../errors.js'
import {peerAddress} from './client-address.js'
import {requestHeader} from './fast.js'
import {nodeIncoming} from './hono-node.js'
import type {Metrics} from '../metrics/metrics.js'
import {httpVariables} from './env.js'
import {presentedCredential} from './bearer-auth.js'

/** What a metrics token may be made of: RFC 6750's token characters, at least 16 of them. */
const TOKEN = /^[A-Za-z0-9\-._~+/]{16,}=*$/

/** Checks `serve --metrics-token` (or MEDPANEL_METRICS_TOKEN) once, when serve starts. */
export function parseMetricsToken(given: string | undefined): string | undefined {
  if (given === undefined) return undefined
  if (!TOKEN.test(given)) {
    throw new AppError(
      'bad_request',
      '--metrics-token must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (as a Bearer token is written); make one with: openssl rand -hex 32',
    )
  }
  return given
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (::ffff:127.0.0.1). */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4) || address === '::1' || address === '0:0:0:0:0:0:0:1'
}

/**
 * Whether a request comes from this machine, for /metrics without a token:
 *
 * - A request that reached the app without a connection (in-process, as tests make them) is the
 *   process's own.
 * - A request from a proxy named by --trust-proxy is judged by the caller the proxy names in
 *   X-Forwarded-For (the address the guessing limits and the access log use): it is local only
 *   when the proxy is on loopback and so is the caller it names, so a proxy on this machine
 *   relaying a caller from elsewhere is not. One from the proxy with no X-Forwarded-For is the
 *   proxy address's own (a scraper there), judged by that address as below.
 * - A request that carries X-Forwarded-For, Forwarded or X-Real-IP and is not judged as above
 *   was relayed by a proxy that --trust-proxy does not name (or names its caller in a header
 *   medpanel does not read): its caller is unknown, so it is refused even from loopback. A
 *   scraper on this machine sends none of them.
 * - Otherwise the TCP peer must be a loopback address.
 */
export function isLocalCaller(c: Context): boolean {
  if (nodeIncoming(c) === undefined) return true
  const peer = peerAddress(c)
  if (peer === undefined) return false
  const forwarded = requestHeader(c, 'x-forwarded-for')
  if (forwarded !== undefined && forwarded.trim() !== '') {
    const caller = httpVariables(c).get('forwardedFor')
    return caller !== undefined && isLoopbackAddress(caller) && isLoopbackAddress(peer)
  }
  if (requestHeader(c, 'forwarded') !== undefined || requestHeader(c, 'x-real-ip') !== undefined) return false
  return isLoopbackAddress(peer)
}

const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * GET /metrics: the Prometheus text exposition of `metrics`. Without a token it answers loopback
 * callers only (isLocalCaller) and refuses others 403; with one it answers any caller presenting
 * `Authorization: Bearer TOKEN` (compared in constant time) and refuses others 401 with a Bearer
 * challenge. Refusals are `{"message": …}`.
 */
export function metricsEndpoint(metrics: Metrics, token: string | undefined): Handler {
  const expected = token === undefined ? undefined : digest(token)
  return async function serveMetrics(c) {
    if (expected) {
      const credential = presentedCredential(requestHeader(c, 'authorization'))
      const presented = credential?.scheme === 'Bearer' ? credential.token : undefined
      // Both sides hashed to 32 bytes: the comparison takes the same time whatever was sent.
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        const reason = presented === undefined ? '/metrics needs the metrics token as a Bearer token' : 'the metrics token is not correct'
        throw new AppError('unauthorized', reason, {challenge: {scheme: 'Bearer', error: presented === undefined ? 'invalid_request' : 'invalid_token'}})
      }
    } else if (!isLocalCaller(c)) {
      throw new AppError('forbidden', '/metrics answers only callers on this machine (loopback); to scrape it from elsewhere, start serve with --metrics-token')
    }
    return c.body(await metrics.render(), 200, {'Content-Type': metrics.contentType, 'Cache-Control': 'no-store'})
  }
}
