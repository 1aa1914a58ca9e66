import type {Context, MiddlewareHandler} from 'hono'
import {AppError} from '../errors.js'
import {jsonResponse} from './fast.js'
import {PROBE_PATHS} from './probes.js'

/**
 * Which host names the service answers to, and which one it calls its own.
 *
 * The service's own address (the OAuth issuer, every absolute link it writes) is fixed when it
 * starts: `serve --base-url`, else the address it listens on. It is never read from a request,
 * so a forged `Host` cannot put another site's name into the metadata, a redirect's `iss` or a
 * page that a shared cache then hands to everyone. On top of that, a request addressed to a host
 * that is not on the list is refused with 421 before any route sees it: that closes DNS
 * rebinding (a hostile page whose name now points at this machine) and keeps caches from storing
 * answers under names that are not the service's.
 */

/** One allowed name: `hostname` with or without a port, or (leading dot) a domain and its subdomains. */
interface HostRule {
  hostname: string
  /** Absent: any port. */
  port?: number
  subdomains: boolean
}

/** Where a name given on the command line is checked: a DNS name, an IPv4 or a bracketed IPv6 address, an optional port, an optional leading dot. */
const ENTRY = /^(\.)?(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?)(?::(\d{1,5}))?$/i

/** The names a loopback listener also answers to, so that curl and browsers on the machine work. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']

/**
 * Parses one `--allowed-host` value: `NAME`, `NAME:PORT`, `[IPv6]:PORT`, or `.example.com` for
 * example.com and every name under it. Letter case does not matter; a name without a port is
 * allowed on any port.
 */
export function parseHostEntry(entry: string): HostRule {
  const match = ENTRY.exec(entry.trim())
  const refuse = () =>
    new AppError(
      'bad_request',
      `--allowed-host takes a host name or address with an optional :PORT (a leading dot allows subdomains), as panel.example.com, .example.com, 10.0.0.5:8080 or [::1]:8080 (got "${entry}")`,
    )
  if (!match) throw refuse()
  const [, dot, name, port] = match
  let hostname: string
  try {
    // The URL parser spells a name the way request URLs spell it: lower case, IPv6 compressed.
    hostname = canonicalHostname(new URL(`http://${name}/`).hostname)
  } catch {
    throw refuse()
  }
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw refuse()
  if (dot && hostname.startsWith('[')) throw refuse()
  return {hostname, port: port === undefined ? undefined : Number(port), subdomains: dot !== undefined}
}

/** `--allowed-host` values (repeated, comma- or space-separated, or from the environment) as a list of entries, each checked. */
export function allowedHostEntries(given: string | readonly string[] | undefined): string[] {
  const entries = [given ?? []]
    .flat()
    .flatMap((value) => value.split(/[\s,]+/))
    .filter((value) => value !== '')
  for (const entry of entries) parseHostEntry(entry)
  return entries
}

/**
 * The names `serve` answers to: the listening address (`listening`, as the server reports it,
 * `http://HOST:PORT`), on a loopback or every-address listener also `localhost`, `127.0.0.1` and
 * `[::1]` on that port, the host of the base URL, and whatever the operator added.
 */
export function defaultAllowedHosts(listening: string, baseUrl: string | undefined, extra: readonly string[] = []): string[] {
  const url = new URL(listening)
  const hostname = canonicalHostname(url.hostname)
  const port = url.port || '80'
  const entries: string[] = []
  if (!isEveryAddress(hostname)) entries.push(`${hostname}:${port}`)
  if (isEveryAddress(hostname) || isLoopback(hostname)) entries.push(...LOOPBACK_NAMES.map((name) => `${name}:${port}`))
  if (baseUrl !== undefined) entries.push(new URL(baseUrl).host)
  entries.push(...extra)
  return [...new Set(entries)]
}

/**
 * True for a listening address that means every interface (0.0.0.0, ::). Such an address names
 * no host a client could use, so it cannot be the service's own address: `serve` then needs
 * --base-url.
 */
export function listensOnEveryAddress(host: string): boolean {
  try {
    return isEveryAddress(new URL(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/`).hostname)
  } catch {
    return false
  }
}

/**
 * Whether an authority (`host:port`, as a request URL spells it: lower case, no port 80) is one of
 * `entries` exactly as they spell it, with a single set lookup and no parsing: most requests name
 * the service that way. False says only "not at a glance": hostCheck then parses the URL, and the
 * front door (http/front-door.ts), which checks the Host header this way, leaves the request to
 * the app, whose hostCheck decides.
 */
export function allowedAsSpelled(entries: readonly string[]): (authority: string) => boolean {
  const exact = new Set<string>()
  const anyPort = new Set<string>()
  for (const rule of entries.map(parseHostEntry)) {
    if (rule.subdomains) continue
    if (rule.port === undefined) anyPort.add(rule.hostname)
    else exact.add(rule.port === 80 ? rule.hostname : `${rule.hostname}:${rule.port}`)
  }
  return (authority) => {
    if (exact.has(authority)) return true
    const colon = authority.lastIndexOf(':')
    return anyPort.has(colon > authority.lastIndexOf(']') ? authority.slice(0, colon) : authority)
  }
}

/**
 * Answers 421 Misdirected Request, `{"message": …}` (the service's default error shape) and
 * `Cache-Control: no-store`, to a request for a host not in `entries`. The host checked is the
 * one the request URL names: the Host header, or the authority of an absolute request target
 * (which HTTP says wins over Host). The probes (/livez, /readyz, /healthz) are exempt: a load
 * balancer or an orchestrator may probe them by IP address or with no Host at all, and they write
 * no address of the service into their answers.
 */
export function hostCheck(entries: readonly string[]): MiddlewareHandler {
  const rules = entries.map(parseHostEntry)
  const spelled = allowedAsSpelled(entries)
  const allowed = (url: string): boolean => {
    const start = url.indexOf('//') + 2
    const end = url.indexOf('/', start)
    const authority = url.slice(start, end === -1 ? undefined : end)
    // An absolute request target may carry user:password@ before the host; that takes the long way.
    if (!authority.includes('@') && spelled(authority)) return true
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return false
    }
    if (parsed.username || parsed.password) return false
    const hostname = canonicalHostname(parsed.hostname)
    const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80))
    return rules.some((rule) => (rule.port === undefined || rule.port === port) && (hostname === rule.hostname || (rule.subdomains && hostname.endsWith(`.${rule.hostname}`))))
  }
  // Not an async function: no extra promise on every request (each middleware layer costs
  // throughput on hot routes).
  return function checkHost(c, next) {
    if (allowed(c.req.url) || PROBE_PATHS.has(c.req.path)) return next()
    const host = hostOf(c.req.url)
    const named = host.length > 100 ? `${host.slice(0, 100)}…` : host
    return Promise.resolve(
      jsonResponse(c, {message: `this service does not answer for the host "${named}"; an operator adds names with serve --allowed-host`}, 421, {'Cache-Control': 'no-store'}),
    )
  }
}

/**
 * The service's own origin, for the OAuth issuer and every absolute link: the base URL it was
 * given (`serve` always gives one: --base-url, else the listening address), never the request's
 * Host. Only an app made in-process without one (tests calling `app.request`) falls back to the
 * request's origin.
 */
export function serviceOrigin(baseUrl: string | undefined, c: Context): string {
  return (baseUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '')
}

function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return ''
  }
}

/** `example.com.` and `example.com` are the same name. */
function canonicalHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '')
}

function isEveryAddress(hostname: string): boolean {
  return hostname === '0.0.0.0' || hostname === '[::]'
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname)
}
