/**
 * Where medpanel may send a partner's Basic credentials and pushed data. A partner URL is set by an
 * operator, but whoever controls the partner's DNS (or a typo) can point it at this host's own
 * neighbours: the cloud metadata service answers on link-local 169.254.169.254 (and
 * fd00:ec2::254 on AWS over IPv6), and hands out instance credentials to any local caller. Those
 * targets are refused when a URL is registered and again, after DNS, before every request.
 * Loopback stays allowed: tests and `partner-serve` run the partner on this machine.
 */

/** The four bytes of a dotted IPv4 address, or undefined when it is not one. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined
  const bytes = parts.map(Number)
  return bytes.every((b) => b <= 255) ? bytes : undefined
}

/** The eight 16-bit groups of an IPv6 address (zone and brackets removed), or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  let rest = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (!rest.includes(':')) return undefined
  // A dotted IPv4 tail (::ffff:169.254.169.254) is two groups.
  const tail: number[] = []
  const dotted = /(?:^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(rest)
  if (dotted) {
    const v4 = ipv4Bytes(dotted[1]!)
    if (!v4) return undefined
    tail.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
    rest = rest.slice(0, rest.length - dotted[1]!.length)
    if (rest.endsWith(':') && !rest.endsWith('::')) rest = rest.slice(0, -1)
  }
  const halves = rest.split('::')
  if (halves.length > 2) return undefined
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN)))
  const head = parse(halves[0]!)
  const back = halves.length === 2 ? parse(halves[1]!) : []
  const known = head.length + back.length + tail.length
  if ([...head, ...back].some(Number.isNaN)) return undefined
  if (halves.length === 1 && known !== 8) return undefined
  if (halves.length === 2 && known > 7) return undefined
  return [...head, ...Array<number>(8 - known).fill(0), ...back, ...tail]
}

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
  // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
  // reach the same IPv4 host, so they answer for it.
  const embedsV4 =
    (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || (g[5] === 0 && (g[6] !== 0 || g[7]! > 1)))) ||
    (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
  if (embedsV4) {
    const reason = refusedIpv4([g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff])
    return reason && `${reason}, written as IPv6`
  }
  return undefined
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

/** True when a partner URL is plain http to a host other than loopback (worth a warning). */
export function isInsecurePartnerUrl(value: string): boolean {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname)
}
