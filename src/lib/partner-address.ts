import {ipv4Bytes, ipv6Groups} from './ip-address.js'

/**
 * Where medpanel may send a partner's Basic credentials and pushed data. A partner URL is set by an
 * operator, but whoever controls the partner's DNS (or a typo) can point it at this host's own
 * neighbours: the cloud metadata service answers on link-local 169.254.169.254 (and
 * fd00:ec2::254 on AWS over IPv6), and hands out instance credentials to any local caller. Those
 * targets are refused when a URL is registered and again, after DNS, before every request.
 * Loopback stays allowed: tests and `partner-serve` run the partner on this machine.
 */

function refusedIpv4(bytes: number[]): string | undefined {
  if (bytes[0] === 0) return 'the unspecified address (0.0.0.0/8 reaches this host itself)'
  if (bytes[0] === 169 && bytes[1] === 254) return 'a link-local address (169.254.0.0/16, where cloud metadata services answer)'
  return undefined
}

/**
 * Why requests must not go to this IP address (a literal, IPv4 or IPv6), in a few words, or
 * undefined when they may. Names that are not IP literals return undefined: resolve them first.
 */
export function refusedAddress(address: string): string | undefined {
  const v4 = ipv4Bytes(address)
  if (v4) return refusedIpv4(v4)
  const g = ipv6Groups(address)
  if (!g) return undefined
  if (g.every((x) => x === 0)) return 'the unspecified address (:: reaches this host itself)'
  if ((g[0]! & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)'
  if (g.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return 'the AWS instance metadata service (fd00:ec2::254)'
  // IPv4 inside IPv6 reaches the same IPv4 host, so each embedded form answers for it.
  for (const embedded of embeddedIpv4(g)) {
    const reason = refusedIpv4(embedded)
    if (reason) return `${reason}, written as IPv6`
  }
  return undefined
}

const bytesOf = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff]

/**
 * Every IPv4 address an IPv6 address may stand for: mapped or compatible with any run of zeros
 * and one ffff before it (::ffff:a.b.c.d, ::ffff:0:a.b.c.d as SIIT writes it, ::a.b.c.d); 6to4
 * (2002:AABB:CCDD::/16); Teredo (2001:0::/32: its server, and its client with the bits inverted);
 * NAT64 (64:ff9b::/96, and the local-use 64:ff9b:1::/48 with the address after the prefix or at
 * the end).
 */
function embeddedIpv4(g: number[]): number[][] {
  const found: number[][] = []
  const prefix = g.slice(0, 6)
  const mapped = prefix.every((x) => x === 0 || x === 0xffff) && prefix.filter((x) => x === 0xffff).length <= 1
  // :: and ::1 are IPv6's own unspecified and loopback addresses, not IPv4 ones.
  const ownV6 = prefix.every((x) => x === 0) && g[6] === 0 && g[7]! <= 1
  if (mapped && !ownV6) found.push(bytesOf(g[6]!, g[7]!))
  if (g[0] === 0x2002) found.push(bytesOf(g[1]!, g[2]!))
  if (g[0] === 0x2001 && g[1] === 0) found.push(bytesOf(g[2]!, g[3]!), bytesOf(g[6]! ^ 0xffff, g[7]! ^ 0xffff))
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    found.push(bytesOf(g[6]!, g[7]!))
    if (g[2] === 1) found.push(bytesOf(g[3]!, ((g[4]! & 0xff) << 8) | (g[5]! >> 8)))
  }
  return found
}

/** Whether a URL's host is this machine's loopback (where plain http never leaves the host). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  if (host === 'localhost' || host === '::1') return true
  const v4 = ipv4Bytes(host)
  return v4 !== undefined && v4[0] === 127
}

/**
 * What is wrong with a partner base URL as an operator gives it (no DNS here), or undefined.
 * `allowInsecure` lets plain http reach a host other than loopback.
 */
export function partnerUrlProblem(value: string, allowInsecure: boolean): string | undefined {
  if (!URL.canParse(value)) return 'must be an http(s) URL'
  const url = new URL(value)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL'
  // Never echo the URL itself here: it would print the password it carries.
  if (url.username !== '' || url.password !== '') {
    return 'must not carry credentials (user:password@); give them with --partner-username and --partner-password, which keep the password sealed'
  }
  const refused = refusedAddress(url.hostname)
  if (refused) return `must not point at ${refused}`
  if (url.protocol === 'http:' && !allowInsecure && !isLoopbackHost(url.hostname)) {
    return 'must use https: plain http sends the Basic credentials unencrypted (http is allowed on loopback, or with --allow-insecure-partner-url on a network you trust)'
  }
  return undefined
}

/**
 * What is wrong with a URL medpanel itself calls from the server (a client's jwks_uri, its
 * back-channel logout URI), or undefined: http(s), no credentials in it, never an address
 * refusedAddress names, and https unless the host is loopback. `plainHttpRisk` says what plain
 * http would expose.
 */
export function calledUrlProblem(value: string, plainHttpRisk: string): string | undefined {
  if (!URL.canParse(value)) return 'must be an https URL'
  const url = new URL(value)
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL'
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@)'
  const refused = refusedAddress(url.hostname)
  if (refused) return `must not point at ${refused}`
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return `must use https: ${plainHttpRisk} (http is allowed on loopback only)`
  return undefined
}

/** True when a partner URL is plain http to a host other than loopback (worth a warning). */
export function isInsecurePartnerUrl(value: string): boolean {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname)
}
