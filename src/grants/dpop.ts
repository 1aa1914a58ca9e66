import {createHmac, timingSafeEqual} from 'node:crypto'
import {calculateJwkThumbprint, compactVerify, decodeJwt, decodeProtectedHeader, errors, importJWK, type JWK} from 'jose'
import {config} from '../config.js'
import {AppError, type Challenge} from '../errors.js'
import {iso} from '../lib/clock.js'
import type {GrantsDb as Db} from './tables.js'
import {spendJti} from './replay.js'
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
 * before for the same key, by any `serve` on the store (kept in the replay store, replay.ts,
 * until the proof is too old anyway).
 */

/** The algorithms a proof may be signed with (discovery's dpop_signing_alg_values_supported); never `none`, never HMAC. */
export const DPOP_ALGS = ['ES256', 'PS256', 'RS256'] as const

/** What the request a proof must match: its method and URL, and at a resource the hash of the access token it carries. */
export interface ProofTarget {
  htm: string
  htu: string
  /** base64url(SHA-256(access token)): the `ath` a resource's proof must carry (RFC 9449 §4.2). */
  ath?: string
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
 *
 * Cheapest first: the header (checked once per distinct header, see signerOf), then the claims as
 * decoded, then the signature (jose; most of a proof's cost), and last the one write.
 */
export async function checkProof({db, keys}: Pick<StoreParts<Db>, 'db' | 'keys'>, proof: string, target: ProofTarget, site: ProofSite, now: Date): Promise<string> {
  const refuse = (why: string) => dpopRefusal(site, 'invalid_dpop_proof', `DPoP proof: ${why}`)
  const signer = await signerOf(proof, refuse)
  const claims = proofClaims(proof, target, now, refuse)
  if (typeof claims.nonce !== 'string' || !isCurrentNonce(keys, claims.nonce, now)) {
    throw dpopRefusal(site, 'use_dpop_nonce', 'DPoP proof: use the nonce in the DPoP-Nonce header of this answer', keys, now)
  }
  try {
    await compactVerify(proof, signer.key, {algorithms: [signer.alg]})
  } catch (error) {
    throw refuse(error instanceof errors.JOSEError ? jwtFailure(error) : 'not a signed JWT')
  }
  const expiresAt = iso(new Date((claims.iat + config.grants.dpopProofSeconds + 2 * config.grants.dpopClockSkewSeconds) * 1000))
  if (!(await spendJti(db, {kind: 'dpop', issuer: signer.jkt, jti: claims.jti, expiresAt}, now, 'relaxed'))) {
    throw refuse('this jti was presented before: make a new proof for every request')
  }
  return signer.jkt
}

/** The claims of a proof checked so far: the ones the rest of the check reads. */
interface ProofClaims {
  iat: number
  jti: string
  nonce: unknown
}

/** The proof's claims, as decoded (before its signature is checked): those RFC 9449 §4.3 asks for, but the nonce. */
function proofClaims(proof: string, target: ProofTarget, now: Date, refuse: (why: string) => AppError): ProofClaims {
  let payload: ReturnType<typeof decodeJwt>
  try {
    payload = decodeJwt(proof)
  } catch {
    throw refuse('not a signed JWT')
  }
  for (const claim of ['iat', 'jti', 'htm', 'htu'] as const) if (payload[claim] === undefined) throw refuse(`claim ${claim} is missing`)
  if (payload.htm !== target.htm) throw refuse(`htm must be ${target.htm}, the method of this request`)
  // The URL as the client wrote it, usually; parsed (and its query dropped) only when it differs.
  if (payload.htu !== target.htu && (typeof payload.htu !== 'string' || withoutQuery(payload.htu) !== target.htu)) {
    throw refuse(`htu must be ${target.htu}, the URL of this request`)
  }
  const {iat, jti} = payload
  const seconds = now.getTime() / 1000
  const skew = config.grants.dpopClockSkewSeconds
  if (typeof iat !== 'number' || !Number.isFinite(iat) || iat > seconds + skew || iat < seconds - config.grants.dpopProofSeconds - skew) {
    throw refuse(`iat must be within the last ${config.grants.dpopProofSeconds} seconds (make a new proof for every request)`)
  }
  if (target.ath !== undefined && payload.ath !== target.ath) throw refuse('ath is not the hash of the access token sent with it')
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw refuse('jti must be a string of 1 to 256 characters')
  return {iat, jti, nonce: payload.nonce}
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
  if (error instanceof errors.JOSEAlgNotAllowed) return `alg must be one of ${DPOP_ALGS.join(', ')}`
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify under the jwk of its header'
  return error.message
}

/** A proof header's key, checked and imported, with its algorithm and thumbprint. */
interface Signer {
  alg: string
  key: CryptoKey
  jkt: string
}

/**
 * Each distinct header checked once, by its text: a client sends the same header (typ, alg, its
 * public key) with every proof, so its next proofs cost a map lookup here. The keys themselves are
 * imported once per thumbprint and algorithm, however their JWK was written. Both maps are bounded
 * (config.caches.dpopKeys) and emptied when full.
 */
const headers = new Map<string, Signer>()
const importedKeys = new Map<string, CryptoKey>()

async function signerOf(proof: string, refuse: (why: string) => AppError): Promise<Signer> {
  const dot = proof.indexOf('.')
  if (dot < 0) throw refuse('not a signed JWT')
  const text = proof.slice(0, dot)
  const known = headers.get(text)
  if (known) return known
  const signer = await checkHeader(proof, refuse)
  if (headers.size >= config.caches.dpopKeys) headers.clear()
  headers.set(text, signer)
  return signer
}

async function checkHeader(proof: string, refuse: (why: string) => AppError): Promise<Signer> {
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(proof)
  } catch {
    throw refuse('not a signed JWT')
  }
  if (header.typ !== 'dpop+jwt') throw refuse('the header must say typ dpop+jwt')
  const alg = header.alg
  if (typeof alg !== 'string' || !(DPOP_ALGS as readonly string[]).includes(alg)) throw refuse(`alg must be one of ${DPOP_ALGS.join(', ')}`)
  const jwk = header.jwk
  if (typeof jwk !== 'object' || jwk === null) throw refuse('the header must carry the public key as jwk')
  if (MEMBERS_OF_PRIVATE_KEYS.some((member) => member in jwk)) throw refuse('the jwk must be a public key (it has private or symmetric members)')
  try {
    const jkt = await calculateJwkThumbprint(jwk as JWK, 'sha256')
    let key = importedKeys.get(`${alg} ${jkt}`)
    if (!key) {
      key = (await importJWK(jwk as JWK, alg)) as CryptoKey
      if (importedKeys.size >= config.caches.dpopKeys) importedKeys.clear()
      importedKeys.set(`${alg} ${jkt}`, key)
    }
    return {alg, key, jkt}
  } catch {
    throw refuse(`the jwk is not a usable ${alg} public key`)
  }
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
