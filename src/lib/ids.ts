import {randomBytes, randomUUID} from 'node:crypto'

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
 * A lowercase RFC 9562 version 7 UUID: the current Unix time in milliseconds, then 74 random bits.
 * For rows written at a high rate under a unique index (the ledger's transactions): new ids land
 * at the index's right edge instead of on a random page, so a commit writes a few index pages
 * instead of one per row. Not for secrets: the time part is guessable.
 */
export function newTimeOrderedUuid(ms: number = Date.now()): string {
  const bytes = randomBytes(16)
  bytes.writeUIntBE(ms, 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
