import type {IncomingMessage} from 'node:http'
import type {Context, MiddlewareHandler} from 'hono'
import proxyaddr from 'proxy-addr'
import {AppError} from '../errors.js'
import {normalizeAddress} from '../lib/ip-address.js'
import {nodeIncoming} from './hono-node.js'
import {type HttpEnv, httpVariables} from './env.js'
import {requestHeader} from './fast.js'

/**
 * The peer of the TCP connection, normalised (lib/ip-address.ts: an IPv4-mapped IPv6 peer is its
 * IPv4 address); undefined where the runtime does not tell (in-process requests).
 */
export function peerAddress(c: Context): string | undefined {
  return socketPeer(nodeIncoming(c))
}

/** Each connection's normalised peer: it cannot change while the socket lives, so it is worked out once. */
const peers = new WeakMap<object, string>()

/** peerAddress of Node's request itself (the front door has no Context). */
export function socketPeer(incoming: IncomingMessage | undefined): string | undefined {
  const socket = incoming?.socket
  if (socket === undefined) return undefined
  let peer = peers.get(socket)
  if (peer === undefined) {
    const raw = socket.remoteAddress
    if (raw === undefined) return undefined
    peer = normalizeAddress(raw) ?? raw
    peers.set(socket, peer)
  }
  return peer
}

/**
 * The address a request came from, which every guessing limit and the access log use: the TCP
 * peer, or, when that peer is a trusted proxy (serve --trust-proxy), the right-most address in
 * X-Forwarded-For that is not itself a trusted proxy. Without trusted proxies the headers are
 * never read, so a caller cannot choose its own address by sending them.
 */
export function clientAddress(c: Context): string | undefined {
  return httpVariables(c).get('forwardedFor') ?? peerAddress(c)
}

/** Normalises the list given to --trust-proxy (addresses and CIDRs, commas or spaces), refusing what is not one. */
export function parseTrustedProxies(given: readonly string[]): string[] {
  return parseAddressList(given, '--trust-proxy')
}

/** A list of addresses and CIDRs given to `flag`, refusing what is not one. */
export function parseAddressList(given: readonly string[], flag: string): string[] {
  const entries = given.flatMap((item) => item.split(/[\s,]+/)).filter(Boolean)
  for (const entry of entries) {
    try {
      proxyaddr.compile(entry)
    } catch {
      throw new AppError('bad_request', `${flag}: "${entry}" is not an IP address or CIDR range (for example 10.0.0.5, 10.0.0.0/8 or fd00::/8)`)
    }
  }
  return entries
}

/** Whether an address is in a list of addresses and CIDRs (parseAddressList's); false for none. */
export function addressListMatcher(list: readonly string[]): (address: string | undefined) => boolean {
  if (list.length === 0) return () => false
  const inList = proxyaddr.compile([...list])
  return (address) => address !== undefined && inList(address, 0)
}

/**
 * Middleware that takes the caller's address from X-Forwarded-For when the peer is one of
 * `trusted` (see clientAddress). Mounted only when there are trusted proxies. Every forwarded
 * value is normalised like the socket's (a port or a zone id dropped, IPv4-mapped made IPv4), so
 * one caller has one address; a value that is not an address at all names nobody, and the caller
 * is then the proxy itself: nothing a client writes in the header reaches a limit's key or the log
 * as it was written.
 */
export function forwardedFor(trusted: readonly string[]): MiddlewareHandler<HttpEnv> {
  const callerOf = forwardedCaller(trusted)
  return function takeForwardedAddress(c, next) {
    const caller = callerOf(peerAddress(c), () => requestHeader(c, 'x-forwarded-for'))
    if (caller !== undefined) c.set('forwardedFor', caller)
    return next()
  }
}

/**
 * forwardedFor's decision without a Context: the caller X-Forwarded-For names when `peer` is one
 * of `trusted` (the header read only then), else undefined (the caller is the peer).
 */
export function forwardedCaller(trusted: readonly string[]): (peer: string | undefined, header: () => string | undefined) => string | undefined {
  const trust = proxyaddr.compile([...trusted])
  const trusts = (address: string, hop: number) => {
    const normal = normalizeAddress(address)
    return normal !== undefined && trust(normal, hop)
  }
  return (peer, header) => {
    if (peer === undefined || !trust(peer, 0)) return undefined
    const request = {connection: {remoteAddress: peer}, socket: {remoteAddress: peer}, headers: {'x-forwarded-for': header()}}
    const caller = proxyaddr(request as unknown as Parameters<typeof proxyaddr>[0], trusts)
    return normalizeAddress(caller) ?? peer
  }
}
