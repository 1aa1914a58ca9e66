import {randomBytes, randomUUID} from 'node:crypto'
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
  return uuidV7({msecs: ms})
}
