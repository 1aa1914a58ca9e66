import {conversationsConfig} from './config.js'

/**
 * Token buckets, one per API key: a key may spend `burst` calls at once and earns `perSecond`
 * back, up to `burst` again. Kept in this process's memory: each `serve` process on a store
 * counts on its own, and a restart starts every key full.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, {tokens: number; at: number}>()

  constructor(private readonly rate: {burst: number; perSecond: number}) {}

  /** Takes one call for `key` at `now`: undefined if allowed, else the whole seconds until one is earned. */
  take(key: string, now: Date): number | undefined {
    const at = now.getTime()
    const bucket = this.buckets.get(key)
    const tokens = bucket ? Math.min(this.rate.burst, bucket.tokens + (Math.max(0, at - bucket.at) / 1000) * this.rate.perSecond) : this.rate.burst
    if (tokens < 1) {
      this.buckets.set(key, {tokens, at})
      return Math.max(1, Math.ceil((1 - tokens) / this.rate.perSecond))
    }
    this.buckets.set(key, {tokens: tokens - 1, at})
    if (this.buckets.size > conversationsConfig.caches.rateLimitBuckets) this.forgetFull(at)
    return undefined
  }

  /** A bucket that has filled up again says nothing a fresh one would not. */
  private forgetFull(at: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((at - bucket.at) / 1000) * this.rate.perSecond >= this.rate.burst) this.buckets.delete(key)
    }
  }
}
