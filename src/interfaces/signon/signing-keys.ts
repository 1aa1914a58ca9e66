import {calculateJwkThumbprint, compactVerify, exportJWK, exportPKCS8, generateKeyPair, importJWK, importPKCS8, type JWK} from 'jose'
import {config} from '../../config.js'
import {iso} from '../../lib/clock.js'
import {openSecret, readerOf, sealSecret, writeTransaction} from '../../store/db.js'
import type {Db} from '../../store/database.js'
import * as repo from './repository.js'

/**
 * ID-token signing keys (OpenID Connect Core §10.1). One current key per algorithm, made on first
 * use; the private half is sealed under the store's key like every other secret, so reading the
 * database file is not enough to sign. Every process of a store signs with the same key and
 * publishes the same set (jwks_uri reads the store). `rotateSigningKeys` retires the current keys:
 * they sign nothing after, and stay published until the last ID token they signed has expired.
 */

/** RS256 is the one every OpenID provider must offer (Core §15.1); ES256 is smaller and faster. */
export const ID_TOKEN_ALGS = ['RS256', 'ES256'] as const
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number]

export function isIdTokenAlg(value: string): value is IdTokenAlg {
  return (ID_TOKEN_ALGS as readonly string[]).includes(value)
}

export interface SigningKey {
  kid: string
  alg: IdTokenAlg
  key: CryptoKey
}

/** Private keys opened in this process, by kid: opening one means unsealing and parsing it. */
const opened = new Map<string, Promise<CryptoKey>>()

async function makeKey(alg: IdTokenAlg, db: Db, now: Date) {
  const pair = await generateKeyPair(alg, {extractable: true, ...(alg === 'RS256' ? {modulusLength: 2048} : {})})
  const jwk = await exportJWK(pair.publicKey)
  // The kid is the key's own RFC 7638 thumbprint: the same key always has the same name.
  const kid = await calculateJwkThumbprint(jwk)
  return {
    kid,
    alg,
    private_key: sealSecret(db, await exportPKCS8(pair.privateKey)),
    public_jwk: JSON.stringify({...jwk, kid, alg, use: 'sig'}),
    created_at: iso(now),
    retired_at: null,
    publish_until: null,
  }
}

/** The key ID tokens of `alg` are signed with now, made (and stored) if there is none yet. */
export async function signingKey(db: Db, alg: IdTokenAlg, now: Date): Promise<SigningKey> {
  let row = await repo.currentSigningKey(readerOf(db), alg)
  if (!row) {
    const made = await makeKey(alg, db, now)
    // Another process may have made one meanwhile: the store keeps one, and every process uses it.
    await writeTransaction(db, (trx) => repo.insertSigningKey(trx, made))
    row = await repo.currentSigningKey(db, alg)
    if (!row) throw new Error(`no ${alg} signing key after making one`)
  }
  const stored = row
  let key = opened.get(stored.kid)
  if (!key) {
    key = importPKCS8(openSecret(db, stored.private_key), alg)
    opened.set(stored.kid, key)
    key.catch(() => opened.delete(stored.kid))
  }
  return {kid: stored.kid, alg, key: await key}
}

export interface JsonWebKeySet {
  keys: JWK[]
}

/** What jwks_uri publishes: every key an unexpired ID token may have been signed with. */
export async function publishedKeys(db: Db, now: Date): Promise<JsonWebKeySet> {
  const rows = await repo.publishedSigningKeys(readerOf(db), iso(now))
  return {keys: rows.map((row) => JSON.parse(row.public_jwk) as JWK)}
}

export interface SigningKeyRotation {
  /** The keys that sign from now on. */
  current: {kid: string; alg: IdTokenAlg}[]
  /** The keys they replaced, and until when each stays published. */
  retired: {kid: string; published_until: string}[]
}

/**
 * Starts new signing keys for every algorithm. The old ones sign nothing more and stay published
 * for one ID-token lifetime plus the allowed clock skew, so every token they signed still
 * validates until it expires; then they go.
 */
export async function rotateSigningKeys(db: Db, now: Date): Promise<SigningKeyRotation> {
  const made = await Promise.all(ID_TOKEN_ALGS.map((alg) => makeKey(alg, db, now)))
  const publishUntil = iso(new Date(now.getTime() + (config.signon.idTokenSeconds + config.signon.clockSkewSeconds) * 1000))
  const retired = await writeTransaction(db, async (trx) => {
    await repo.deleteUnpublishedKeys(trx, iso(now))
    const kids = await repo.retireSigningKeys(trx, iso(now), publishUntil)
    for (const row of made) await repo.insertSigningKey(trx, row)
    return kids
  })
  return {current: made.map(({kid, alg}) => ({kid, alg})), retired: retired.map((kid) => ({kid, published_until: publishUntil}))}
}

/**
 * The claims of an ID token this store's keys signed, checked for signature and issuer only: an
 * `id_token_hint` at logout may have expired (OpenID Connect RP-Initiated Logout §2), so expiry
 * is not a reason to refuse it. Undefined for anything else.
 */
export async function readOwnIdToken(db: Db, token: string, issuer: string, now: Date): Promise<Record<string, unknown> | undefined> {
  if (token.length > 8192) return undefined
  const published = await repo.publishedSigningKeys(readerOf(db), iso(now))
  for (const row of published) {
    const jwk = JSON.parse(row.public_jwk) as JWK
    try {
      const {payload} = await compactVerify(token, await importJWK(jwk, row.alg), {algorithms: [row.alg]})
      const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>
      return claims.iss === issuer ? claims : undefined
    } catch {
      // Not this key's signature (or not a JWS at all): try the next key.
    }
  }
  return undefined
}
