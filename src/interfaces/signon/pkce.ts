import {createHash} from 'node:crypto'
import {safeEqual} from '../../lib/hashing.js'

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
/** An S256 challenge is a base64url SHA-256: exactly 43 characters. */
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/

export function isValidVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier)
}

export function isValidChallenge(challenge: string): boolean {
  return CHALLENGE.test(challenge)
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  return safeEqual(s256(verifier), challenge)
}
