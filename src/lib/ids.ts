import {randomBytes, randomFillSync, randomUUID} from 'node:crypto'
import {v7 as uuidV7} from 'uuid'

/** A URL-safe random secret of `bytes` bytes of entropy (32 bytes = 256 bits). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** A client id: 24 lowercase hex characters, easy to copy and to type. */
export function newClientId(): string {
  return randomBytes(12).toString('hex')
}

/** A lowercase RFC 4122 v4 UUID. */
export function newUuid(): string {
  return randomUUID()
}

/**
 * A lowercase RFC 9562 version 7 UUID (the `uuid` package): the Unix time in milliseconds first,
 * then random bits. For rows written at a high rate under a unique index (the ledger's
 * transactions): new ids land at the index's right edge instead of on a random page, so a commit
 * writes a few index pages instead of one per row. Not for secrets: the time part is guessable.
 */
export function newTimeOrderedUuid(ms: number = Date.now()): string {
  return uuidV7({msecs: ms, random: pooledRandom()})
}

/**
 * 16 random bytes from a pool refilled 256 ids at a time: asking the system for 16 bytes per id
 * cost more than the rest of making it (a withdrawal makes one). Each id's bytes are its own: a
 * view of a slice of the pool that is never handed out twice, and the pool is replaced, not
 * overwritten, when spent.
 */
const POOL_IDS = 256
let pool = new Uint8Array(0)
let next = 0
function pooledRandom(): Uint8Array {
  if (next + 16 > pool.length) {
    pool = randomFillSync(new Uint8Array(16 * POOL_IDS))
    next = 0
  }
  const bytes = pool.subarray(next, next + 16)
  next += 16
  return bytes
}
