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
