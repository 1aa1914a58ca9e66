import {createHash, hash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions} from 'node:crypto'

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key)))
  })
}

/** SHA-256 hex digest: how tokens, codes and client secrets are stored (they are high-entropy). */
export function sha256(value: string): string {
  // One-shot crypto.hash (Node 20.12+) is three times faster than createHash for short inputs,
  // and this runs on every authenticated request.
  return hash('sha256', value, 'hex')
}

/** Compares two strings in time that does not depend on where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest()
  const right = createHash('sha256').update(b).digest()
  return timingSafeEqual(left, right) && a.length === b.length
}

const SCRYPT = {N: 16384, r: 8, p: 1, keylen: 32}

/** Hashes a member password with scrypt; the result carries its own parameters and salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await scrypt(password, salt, SCRYPT.keylen, {N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p})
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`
}

/**
 * True when a stored hash was made with other parameters than today's: it still verifies (each
 * hash carries its own), and the next successful sign-in replaces it with a current one.
 */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$')
  return scheme !== 'scrypt' || Number(n) !== SCRYPT.N || Number(r) !== SCRYPT.r || Number(p) !== SCRYPT.p
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false
  const expected = Buffer.from(key, 'base64')
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  })
  return timingSafeEqual(actual, expected)
}
