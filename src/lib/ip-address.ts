/**
 * IP addresses as medpanel reads them: one parser for every address the service sees (the
 * socket's peer, `--trust-proxy` entries' matches, forwarded values) and for the literals of
 * partner URLs, so two spellings of one host are never two callers, or two verdicts. Not
 * ipaddr.js (proxy-addr's, 1.9): it reads `010.0.0.1` as octal 8.0.0.1, a second host for one
 * spelling; node:net's isIP does not normalise, nor say which IPv4 an IPv6 address embeds.
 */

/** The four bytes of a dotted IPv4 address, or undefined when it is not one. */
export function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined
  const bytes = parts.map(Number)
  return bytes.every((b) => b <= 255) ? bytes : undefined
}

/** The eight 16-bit groups of an IPv6 address (zone and brackets removed), or undefined. */
export function ipv6Groups(text: string): number[] | undefined {
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

/** IPv6 groups in RFC 5952's text: lower case, no leading zeros, the longest run of zeros as `::`. */
function formatIpv6(groups: number[]): string {
  let best = {at: -1, length: 1}
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > best.length) best = {at: i, length: j - i}
    i = j === i ? i + 1 : j
  }
  const text = groups.map((g) => g.toString(16))
  if (best.at < 0) return text.join(':')
  return `${text.slice(0, best.at).join(':')}::${text.slice(best.at + best.length).join(':')}`
}

/**
 * An address as the service keys and logs it, or undefined when the text is not an address:
 * surrounding space and a port dropped (`10.0.0.1:5000`, `[2001:db8::1]:443`), a zone id dropped
 * (`fe80::1%eth0`), an IPv4-mapped IPv6 address made IPv4 (`::ffff:10.0.0.1` is `10.0.0.1`), IPv6
 * in its one canonical spelling.
 */
export function normalizeAddress(raw: string): string | undefined {
  let text = raw.trim()
  const port = /^(\[[^\]]+\]|[\d.]+):(\d{1,5})$/.exec(text)
  if (port) {
    if (Number(port[2]) > 65535) return undefined
    text = port[1]!
  }
  const bracketed = /^\[([^\]]+)\]$/.exec(text)
  if (bracketed) text = bracketed[1]!
  if (ipv4Bytes(text)) return ipv4Bytes(text)!.join('.')
  const groups = ipv6Groups(text)
  if (!groups) return undefined
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.')
  }
  return formatIpv6(groups)
}

/**
 * The key a guessing limit counts an address under: an IPv4 address itself, an IPv6 address by
 * its /64 (one subscriber's whole prefix: a host given a /64 picks any of its 2^64 addresses).
 * Expects a normalised address; anything else is its own key.
 */
export function limitKey(address: string): string {
  const groups = address.includes(':') ? ipv6Groups(address) : undefined
  return groups ? `${formatIpv6([...groups.slice(0, 4), 0, 0, 0, 0])}/64` : address
}
