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

/**
 * The largest value an integer id column (members.id and the member_id columns that point at it)
 * can hold on every store: PostgreSQL's `integer` is 32-bit, and SQLite's wider integers cannot
 * hold more there because copy-store moves a store between the two. A larger id names nothing on
 * either store, so it is answered as not found rather than sent to PostgreSQL, which would refuse
 * it as out of range (a store error, not a miss).
 */
export const MAX_STORED_ID = 2_147_483_647

/** True for an id an integer id column can hold: a whole number from 1 to MAX_STORED_ID. */
export function isStoredId(id: number): boolean {
  return Number.isInteger(id) && id >= 1 && id <= MAX_STORED_ID
}

/**
 * The stored id a caller's text names ("42", " 042 "), or undefined when it can name none:
 * anything but decimal digits (signs, exponents, hex, fractions), zero, or past MAX_STORED_ID.
 * The one check every path segment, argument and flag that takes such an id goes through, so an
 * id is found or not found the same way on SQLite and PostgreSQL.
 */
export function storedIdOf(text: string): number | undefined {
  const digits = text.trim()
  if (!/^\d+$/.test(digits)) return undefined
  const id = Number(digits)
  return isStoredId(id) ? id : undefined
}

/** The textual form of a UUID (8-4-4-4-12 hex digits, any version or case), which every transaction id has. */
export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)
}
