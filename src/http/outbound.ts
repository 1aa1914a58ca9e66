import {lookup as dnsLookup, type LookupAddress} from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import {isIP, type LookupFunction} from 'node:net'
import {config} from '../config.js'
import {refusedAddress} from '../lib/partner-address.js'
import {printable} from '../lib/printable.js'

/** One HTTP request to a partner, fully built (URL, headers, body). */
export interface PartnerRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
}

export interface PartnerResponse {
  status: number
  /** The answer's body as text, at most `maxBodyBytes` of it. */
  body: string
  /** True when the answer was longer than `maxBodyBytes`: the rest was never read. */
  truncated?: boolean
}

export interface SendOptions {
  /** Bytes of the answer's body read at most; the connection is closed on the rest. */
  maxBodyBytes?: number
}

/**
 * How deliveries reach partners. The worker only sees this interface, so tests swap in a fake
 * and production uses httpTransport. A transport throws on network failure, timeout or a refused
 * target (RefusedTarget).
 */
export interface Transport {
  send(request: PartnerRequest, timeoutMs: number, options?: SendOptions): Promise<PartnerResponse>
}

/** A request medpanel will not make: the partner's name leads to an address it must not reach. */
export class RefusedTarget extends Error {
  override name = 'RefusedTarget'
}

/** Every address a host name resolves to, as the system resolver (and so `ping`) sees it. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, {all: true, verbatim: true}, (error, addresses) => (error ? reject(error) : resolve(addresses))))

/**
 * The addresses a request to `hostname` may use, every one of them checked: a name that resolves
 * to a link-local or unspecified address (the cloud metadata service, this host) is refused
 * whole, since the resolver's answer can change between two lookups (DNS rebinding).
 */
async function checkedAddresses(hostname: string, resolve: Resolver): Promise<LookupAddress[]> {
  const family = isIP(hostname)
  const addresses = family ? [{address: hostname, family}] : await resolve(hostname)
  if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), {code: 'ENOTFOUND'})
  for (const {address} of addresses) {
    const refused = refusedAddress(address)
    if (refused) throw new RefusedTarget(`refused: ${family ? hostname : `${hostname} resolves to ${address}`}, ${refused}; nothing was sent`)
  }
  return addresses
}

/** A `lookup` for the request that answers only the addresses already checked: no second DNS query. */
function pinned(addresses: LookupAddress[]): LookupFunction {
  return ((_hostname: string, options: {all?: boolean; family?: number | string}, callback: (...args: unknown[]) => void) => {
    const wanted = options?.family === 4 || options?.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses
    const list = wanted.length ? wanted : addresses
    if (options?.all) callback(null, list)
    else callback(null, list[0]!.address, list[0]!.family)
  }) as LookupFunction
}

function timeoutError(timeoutMs: number): Error {
  const error = new Error(`no answer within ${timeoutMs} ms`)
  error.name = 'TimeoutError'
  return error
}

/**
 * Partner requests over node:http(s). Each one resolves the partner's host, refuses link-local
 * and unspecified addresses, and connects only to the addresses it checked (a pinned `lookup`).
 * At most `maxBodyBytes` of an answer are read (config.http.outboundBodyLimitBytes unless
 * told): past that the connection is closed, so a partner cannot fill medpanel's memory. The
 * timeout covers the lookup, the connection and the answer. Keep-alive agents reuse sockets, so
 * a burst of member chunks to one partner runs over a handful of them.
 */
export function httpTransport(options: {resolve?: Resolver} = {}): Transport {
  const resolve = options.resolve ?? systemResolver
  const agents = {'http:': new http.Agent({keepAlive: true}), 'https:': new https.Agent({keepAlive: true})}
  return {
    send(request, timeoutMs, sendOptions = {}) {
      const limit = sendOptions.maxBodyBytes ?? config.http.outboundBodyLimitBytes
      return sendOnce(request, timeoutMs, limit, resolve, agents)
    },
  }
}

/** One request to a partner: checked and pinned to the addresses its name resolved to, bounded in time and in the answer's size. */
function sendOnce(request: PartnerRequest, timeoutMs: number, limit: number, resolve: Resolver, agents: Record<'http:' | 'https:', http.Agent>): Promise<PartnerResponse> {
  return new Promise<PartnerResponse>((done, fail) => {
    let settled = false
    let req: http.ClientRequest | undefined
    const settle = (error: Error | undefined, response?: PartnerResponse) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (error) {
        req?.destroy()
        fail(error)
      } else done(response!)
    }
    const timer = setTimeout(() => settle(timeoutError(timeoutMs)), timeoutMs)
    const url = new URL(request.url)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return settle(new RefusedTarget(`refused: ${url.protocol} is not http(s)`))
    if (url.username || url.password)
      return settle(new RefusedTarget('refused: the partner URL carries credentials; set them with update-client --partner-username and --partner-password'))
    const hostname = url.hostname.replace(/^\[|\]$/g, '')
    checkedAddresses(hostname, resolve).then((addresses) => {
      if (settled) return
      const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8')
      req = (url.protocol === 'https:' ? https : http).request({
        method: request.method,
        hostname,
        port: url.port || undefined,
        path: url.pathname + url.search,
        headers: body ? {...request.headers, 'content-length': String(body.length)} : request.headers,
        agent: agents[url.protocol as 'http:' | 'https:'],
        lookup: pinned(addresses),
      })
      req.on('error', (error) => settle(error))
      req.on('response', (res) => readAnswer(res, limit, () => settled, settle))
      req.end(body)
    }, settle)
  })
}

/**
 * Reads a partner's answer into `settle`, keeping at most `limit` bytes of its body: past them the
 * answer is marked truncated and the socket closed, so a partner cannot make us hold more.
 */
function readAnswer(res: http.IncomingMessage, limit: number, settled: () => boolean, settle: (error: Error | undefined, response?: PartnerResponse) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  const finish = (truncated: boolean) => settle(undefined, {status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), truncated})
  res.on('data', (chunk: Buffer) => {
    if (settled()) return
    if (size + chunk.length > limit) {
      chunks.push(chunk.subarray(0, limit - size))
      size = limit
      finish(true)
      // The rest is never read: closing the socket stops the partner's sending.
      res.destroy()
      return
    }
    chunks.push(chunk)
    size += chunk.length
  })
  res.on('end', () => finish(false))
  res.on('error', (error) => settle(error))
  res.on('close', () => {
    if (!res.complete) settle(Object.assign(new Error('the partner closed the connection mid-answer'), {code: 'ECONNRESET'}))
  })
}

/** The transport serve, push-* --wait and verify-partner use, and sign-on fetching clients' jwks_uris. */
export const partnerTransport: Transport = httpTransport()

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
  const e = error as Error & {code?: string; cause?: {code?: string; message?: string}}
  if (e?.name === 'TimeoutError') return {timeout: true, reason: 'timeout'}
  if (error instanceof RefusedTarget) return {timeout: false, reason: printable(error.message)}
  if (typeof e?.code === 'string') return {timeout: false, reason: printable(e.code)}
  if (e?.cause?.code) return {timeout: false, reason: printable(e.cause.code)}
  const text = e?.cause?.message ?? e?.message ?? String(error)
  for (const [pattern, code] of DENO_NETWORK_ERRORS) if (pattern.test(text)) return {timeout: false, reason: code}
  return {timeout: false, reason: printable(text)}
}
