import {config, environment} from '../config.js'
import {hash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions} from 'node:crypto'

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

/**
 * Whether `value`'s SHA-256 is the hex digest `digest` (as sha256 stores it), in time that does
 * not depend on where they differ. One hash: the stored digest is compared as it is.
 */
export function matchesDigest(value: string, digest: string): boolean {
  const presented = hash('sha256', value, 'buffer') as unknown as Buffer
  const stored = Buffer.from(digest, 'hex')
  // A digest that is not 64 hex digits decodes short and matches nothing.
  return stored.length === presented.length && timingSafeEqual(presented, stored)
}

/** Compares two strings in time that does not depend on where they differ. */
export function safeEqual(a: string, b: string): boolean {
  // Digests of equal length whatever the inputs; one-shot hashing, as in sha256 above.
  const left = hash('sha256', a, 'buffer') as unknown as Buffer
  const right = hash('sha256', b, 'buffer') as unknown as Buffer
  return timingSafeEqual(left, right) && a.length === b.length
}

/** scrypt's cost as log2 N when MEDPANEL_PASSWORD_COST is unset (config.ts says why 17). */
export const DEFAULT_PASSWORD_COST = config.passwords.defaultCost

/**
 * The parameters new hashes are made with. The cost comes from the environment's settings, which
 * every command checked as it started (config.ts), so a bad MEDPANEL_PASSWORD_COST never gets here.
 */
function currentParameters(): {N: number; r: number; p: number; keylen: number} {
  return {N: 2 ** environment().passwordCost, r: 8, p: 1, keylen: 32}
}

/** scrypt needs 128 × N × r bytes; Node refuses more than 32 MiB unless told. */
const maxmem = (N: number, r: number) => 256 * N * r

/** Hashes a member password with scrypt; the result carries its own parameters and salt. */
export async function hashPassword(password: string): Promise<string> {
  const {N, r, p, keylen} = currentParameters()
  const salt = randomBytes(16)
  const key = await scrypt(password, salt, keylen, {N, r, p, maxmem: maxmem(N, r)})
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`
}

/** A hash of nothing with today's parameters: verifying against it costs what a real check does. */
export function decoyHash(): string {
  const {N, r, p} = currentParameters()
  return `scrypt$${N}$${r}$${p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`
}

/**
 * True when a stored hash was made with other parameters than today's: it still verifies (each
 * hash carries its own), and the next successful sign-in replaces it with a current one.
 */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$')
  const current = currentParameters()
  return scheme !== 'scrypt' || Number(n) !== current.N || Number(r) !== current.r || Number(p) !== current.p
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false
  const expected = Buffer.from(key, 'base64')
  const N = Number(n)
  // Hashes are ours, but a damaged row must not make one sign-in allocate gigabytes.
  if (!Number.isInteger(N) || N < 2 || N > 2 ** 20 || Number(r) > 32 || Number(p) > 16) return false
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {N, r: Number(r), p: Number(p), maxmem: maxmem(N, Number(r)) * Number(p)})
  return timingSafeEqual(actual, expected)
}
