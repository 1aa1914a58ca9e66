/**
 * mulberry32: a small, fast generator over a 32-bit state; the same seed always gives the same
 * floats in [0, 1). The one implementation of it: the seeds' generators (through Rng), the tests
 * and the benchmarks that make reproducible data all draw from it. Not for secrets.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * A seeded random source for the seed generators: mulberry32 seeded by hashing text (so "seed 7,
 * client acme, pulse 2" is one stable stream), with the draws they need. Not for secrets.
 */
export class Rng {
  /** A float in [0, 1). */
  readonly next: () => number

  constructor(seed: string | number) {
    this.next = mulberry32(hashSeed(String(seed)))
  }

  /** An integer in [min, max], both ends included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(probability: number): boolean {
    return this.next() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('cannot pick from an empty list')
    return items[Math.floor(this.next() * items.length)]!
  }

  /** Picks by weight; `weights` lines up with `items`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    const total = weights.reduce((a, b) => a + b, 0)
    let roll = this.next() * total
    for (let i = 0; i < items.length; i++) {
      roll -= weights[i]!
      if (roll < 0) return items[i]!
    }
    return items[items.length - 1]!
  }

  /** A new array in random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1))
      ;[out[i], out[j]] = [out[j]!, out[i]!]
    }
    return out
  }

  /** `count` distinct items, kept in their original order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set(this.shuffle(items.map((_, i) => i)).slice(0, count))
    return items.filter((_, i) => chosen.has(i))
  }

  /** A lowercase RFC 4122 version-4 UUID drawn from this stream. */
  uuid(): string {
    const hex: string[] = []
    for (let i = 0; i < 16; i++) hex.push(this.int(0, 255).toString(16).padStart(2, '0'))
    hex[6] = (((parseInt(hex[6]!, 16) & 0x0f) | 0x40) >>> 0).toString(16).padStart(2, '0')
    hex[8] = (((parseInt(hex[8]!, 16) & 0x3f) | 0x80) >>> 0).toString(16).padStart(2, '0')
    const h = hex.join('')
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }
}

/** cyrb53-style string hash folded to 32 bits: spreads nearby seeds ("1", "2") far apart. */
function hashSeed(text: string): number {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (h1 ^ h2) >>> 0
}
