import {createHash, createHmac, timingSafeEqual} from 'node:crypto'
import {calculateJwkThumbprint, decodeProtectedHeader, errors, importJWK, type JWK, jwtVerify} from 'jose'
import {config} from '../config.js'
import {AppError, type Challenge} from '../errors.js'
import {iso} from '../lib/clock.js'
import {writeTransaction} from '../store/transactions.js'
import type {GrantsDb as Db} from './tables.js'
import type {StoreParts} from '../store/database.js'
import {derivedKey, type Keyring} from '../store/secrets.js'

/**
 * DPoP (RFC 9449): a client proves, at each request, that it holds the private key its tokens
 * are bound to, by sending a fresh JWT signed with it (the proof) in the `DPoP` header. A stolen
 * bound token is then worth nothing without the key.
 *
 * A proof is accepted when: its header says `typ: dpop+jwt`, an algorithm of DPOP_ALGS and a
 * public `jwk` it verifies under; it names this request's method (`htm`) and URL without query
 * (`htu`); it was made within the last `config.grants.dpopProofSeconds` (`iat`); it carries a
 * nonce this service handed out lately (§8, §9: so no proof can be made ahead of time); at a
 * resource, the hash of the access token it goes with (`ath`); and its `jti` was never accepted
 * before for the same key, by any `serve` on the store (kept in `dpop_proofs` until the proof
 * is too old anyway).
 */

/** The algorithms a proof may be signed with (discovery's dpop_signing_alg_values_supported); never `none`, never HMAC. */
export const DPOP_ALGS = ['ES256', 'PS256', 'RS256'] as const

/** What the request a proof must match: its method and URL, and at a resource the access token it carries. */
export interface ProofTarget {
  htm: string
  htu: string
  accessToken?: string
}

/** Where a refusal is answered: the token endpoint (400, an OAuth body) or a resource (401 with a DPoP challenge). */
export type ProofSite = 'token endpoint' | 'resource'

const MEMBERS_OF_PRIVATE_KEYS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

/** The refusal of a request at `site`, with the DPoP challenge at a resource (RFC 9449 §7.1). */
export function dpopRefusal(site: ProofSite, code: 'invalid_dpop_proof' | 'use_dpop_nonce' | 'invalid_token', why: string, keys?: Keyring, now?: Date): AppError {
  const nonceHeader = code === 'use_dpop_nonce' && keys && now ? {'DPoP-Nonce': currentNonce(keys, now)} : undefined
  if (site === 'token endpoint') return new AppError(code, why, {headers: nonceHeader})
  const challenge: Challenge = {scheme: 'DPoP', error: code, algs: DPOP_ALGS.join(' ')}
  return new AppError(code, why, {status: 401, challenge, headers: nonceHeader})
}

/**
 * Checks the proof of a request and spends its jti; answers the JWK thumbprint of its key (the
 * `jkt` a token is bound to). Throws the refusal for `site`: invalid_dpop_proof with the reason,
 * or use_dpop_nonce with a fresh nonce in the DPoP-Nonce header.
 */
export async function checkProof({db, keys}: Pick<StoreParts<Db>, 'db' | 'keys'>, proof: string, target: ProofTarget, site: ProofSite, now: Date): Promise<string> {
  const refuse = (why: string) => dpopRefusal(site, 'invalid_dpop_proof', `DPoP proof: ${why}`)
  const {key, jkt} = await proofKey(proof, refuse)
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    ;({payload} = await jwtVerify(proof, key, {typ: 'dpop+jwt', algorithms: [...DPOP_ALGS], currentDate: now, requiredClaims: ['iat', 'jti', 'htm', 'htu']}))
  } catch (error) {
    throw refuse(error instanceof errors.JOSEError ? jwtFailure(error) : 'not a signed JWT')
  }
  if (payload.htm !== target.htm) throw refuse(`htm must be ${target.htm}, the method of this request`)
  if (typeof payload.htu !== 'string' || withoutQuery(payload.htu) !== target.htu) throw refuse(`htu must be ${target.htu}, the URL of this request`)
  const seconds = now.getTime() / 1000
  const iat = payload.iat!
  const skew = config.grants.dpopClockSkewSeconds
  if (iat > seconds + skew || iat < seconds - config.grants.dpopProofSeconds - skew) {
    throw refuse(`iat must be within the last ${config.grants.dpopProofSeconds} seconds (make a new proof for every request)`)
  }
  if (target.accessToken !== undefined && payload.ath !== accessTokenHash(target.accessToken)) throw refuse('ath is not the hash of the access token sent with it')
  if (typeof payload.nonce !== 'string' || !isCurrentNonce(keys, payload.nonce, now)) {
    throw dpopRefusal(site, 'use_dpop_nonce', 'DPoP proof: use the nonce in the DPoP-Nonce header of this answer', keys, now)
  }
  const jti = payload.jti!
  if (jti === '' || jti.length > 256) throw refuse('jti must be a string of 1 to 256 characters')
  const expiresAt = iso(new Date((iat + config.grants.dpopProofSeconds + 2 * skew) * 1000))
  if (!(await spendProof(db, jkt, jti, expiresAt, now))) throw refuse('this jti was presented before: make a new proof for every request')
  return jkt
}

/** base64url(SHA-256(access token)): the `ath` a resource proof carries (RFC 9449 §4.2). */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url')
}

function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return undefined
  }
}

function jwtFailure(error: errors.JOSEError): string {
  if (error instanceof errors.JWTClaimValidationFailed) return `claim ${error.claim} is missing or not right (${error.message})`
  if (error instanceof errors.JOSEAlgNotAllowed) return `alg must be one of ${DPOP_ALGS.join(', ')}`
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify under the jwk of its header'
  return error.message
}

/**
 * The key in a proof's header, and its thumbprint: remembered per key (a client signs every proof
 * with the same one), so a busy client costs one import and one thumbprint in all.
 */
const keys = new Map<string, {key: CryptoKey | Uint8Array; jkt: string}>()

async function proofKey(proof: string, refuse: (why: string) => AppError): Promise<{key: CryptoKey | Uint8Array; jkt: string}> {
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(proof)
  } catch {
    throw refuse('not a signed JWT')
  }
  if (header.typ !== 'dpop+jwt') throw refuse('the header must say typ dpop+jwt')
  if (typeof header.alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(header.alg)) throw refuse(`alg must be one of ${DPOP_ALGS.join(', ')}`)
  const jwk = header.jwk
  if (typeof jwk !== 'object' || jwk === null) throw refuse('the header must carry the public key as jwk')
  if (MEMBERS_OF_PRIVATE_KEYS.some((member) => member in jwk)) throw refuse('the jwk must be a public key (it has private or symmetric members)')
  const cacheKey = `${header.alg} ${JSON.stringify(jwk)}`
  let known = keys.get(cacheKey)
  if (!known) {
    try {
      known = {key: await importJWK(jwk as JWK, header.alg), jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256')}
    } catch {
      throw refuse(`the jwk is not a usable ${header.alg} public key`)
    }
    if (keys.size >= config.caches.dpopKeys) keys.clear()
    keys.set(cacheKey, known)
  }
  return known
}

/** When expired proofs were last swept, per store: at most once a sweep interval, not at every proof. */
const lastSweep = new WeakMap<object, number>()

/**
 * Records a proof's jti for its key; false when it was recorded before, by this process or another
 * on the store. A relaxed write: a request's proof is not worth a sync to disk, and a power cut
 * that took the last records would leave their proofs a minute of life at most, nonce-bound.
 */
async function spendProof(db: Db, jkt: string, jti: string, expiresAt: string, now: Date): Promise<boolean> {
  const sweep = now.getTime() - (lastSweep.get(db) ?? 0) >= config.grants.dpopSweepEveryMs
  if (sweep) lastSweep.set(db, now.getTime())
  return writeTransaction(
    db,
    async (trx) => {
      if (sweep) await trx.deleteFrom('dpop_proofs').where('expires_at', '<', iso(now)).execute()
      const result = await trx
        .insertInto('dpop_proofs')
        .values({jkt, jti, expires_at: expiresAt})
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst()
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
    },
    {durability: 'relaxed'},
  )
}

/**
 * Nonces (RFC 9449 §8, §9) are made, not stored: the HMAC of the current period's number under a
 * key derived from the store's, so every `serve` on the store makes and accepts the same ones
 * with no write, and rotating the store key voids them (the client is then handed a new one). A
 * nonce of the period before is still accepted, so a client that just got one is never turned
 * away at a period's turn.
 */
const nonces = new WeakMap<Keyring, {key: Buffer; period: number; current: string; previous: string}>()

function nonceState(keys: Keyring, now: Date) {
  const period = Math.floor(now.getTime() / 1000 / config.grants.dpopNonceSeconds)
  let state = nonces.get(keys)
  if (!state || state.period !== period) {
    const key = state?.key ?? derivedKey(keys, 'dpop nonces')
    const make = (n: number) => createHmac('sha256', key).update(String(n)).digest('base64url')
    state = {key, period, current: make(period), previous: make(period - 1)}
    nonces.set(keys, state)
  }
  return state
}

/** The nonce a client should put in its next proof. */
export function currentNonce(keys: Keyring, now: Date): string {
  return nonceState(keys, now).current
}

function isCurrentNonce(keys: Keyring, nonce: string, now: Date): boolean {
  const state = nonceState(keys, now)
  return sameText(nonce, state.current) || sameText(nonce, state.previous)
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
