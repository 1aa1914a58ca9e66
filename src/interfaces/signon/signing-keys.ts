import {calculateJwkThumbprint, compactVerify, exportJWK, exportPKCS8, generateKeyPair, importJWK, importPKCS8, type JWK} from 'jose'
import {signonConfig} from './config.js'
import {iso} from '../../lib/clock.js'
import type {StoreParts} from '../../store/database.js'
import {seal, unseal, type Keyring} from '../../store/secrets.js'
import {writeTransaction} from '../../store/transactions.js'
import type {SignonDb as Db} from './tables.js'
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

async function makeKey(alg: IdTokenAlg, keys: Keyring, now: Date) {
  const pair = await generateKeyPair(alg, {extractable: true, ...(alg === 'RS256' ? {modulusLength: 2048} : {})})
  const jwk = await exportJWK(pair.publicKey)
  // The kid is the key's own RFC 7638 thumbprint: the same key always has the same name.
  const kid = await calculateJwkThumbprint(jwk)
  return {
    kid,
    alg,
    private_key: seal(keys, await exportPKCS8(pair.privateKey)),
    public_jwk: JSON.stringify({...jwk, kid, alg, use: 'sig'}),
    created_at: iso(now),
    retired_at: null,
    publish_until: null,
  }
}

/**
 * Makes a key for every algorithm that has none still signing. Keys are made for all algorithms
 * at once, and before jwks_uri is first read, so a relying party never meets an ID token signed by
 * a key the set it fetched did not have. Another process may make them at the same moment: the
 * store keeps one per algorithm (a unique index), and every process uses that one.
 */
async function ensureKeys({db, reader, keys}: StoreParts<Db>, now: Date): Promise<void> {
  const missing: IdTokenAlg[] = []
  for (const alg of ID_TOKEN_ALGS) if ((await repo.liveSigningKeys(reader, alg, iso(now))).length === 0) missing.push(alg)
  if (missing.length === 0) return
  const made = await Promise.all(missing.map((alg) => makeKey(alg, keys, now)))
  await writeTransaction(db, async (trx) => {
    for (const row of made) await repo.insertSigningKey(trx, row)
  })
}

/** The key ID tokens of `alg` are signed with now: the oldest that has not stopped signing. */
export async function signingKey(store: StoreParts<Db>, alg: IdTokenAlg, now: Date): Promise<SigningKey> {
  let row = (await repo.liveSigningKeys(store.reader, alg, iso(now)))[0]
  if (!row) {
    await ensureKeys(store, now)
    row = (await repo.liveSigningKeys(store.db, alg, iso(now)))[0]
    if (!row) throw new Error(`no ${alg} signing key after making one`)
  }
  const stored = row
  let key = opened.get(stored.kid)
  if (!key) {
    key = importPKCS8(unseal(store.keys, stored.private_key), alg)
    opened.set(stored.kid, key)
    key.catch(() => opened.delete(stored.kid))
  }
  return {kid: stored.kid, alg, key: await key}
}

export interface JsonWebKeySet {
  keys: JWK[]
}

/**
 * What jwks_uri publishes: the keys signing now, the ones that take over at the next switch, and
 * retired ones an unexpired ID token may have been signed with. The first read makes the keys.
 */
export async function publishedKeys(store: StoreParts<Db>, now: Date): Promise<JsonWebKeySet> {
  let rows = await repo.publishedSigningKeys(store.reader, iso(now))
  const live = (alg: string) => rows.some((row) => row.alg === alg && (row.retired_at === null || row.retired_at > iso(now)))
  if (!ID_TOKEN_ALGS.every(live)) {
    await ensureKeys(store, now)
    rows = await repo.publishedSigningKeys(store.db, iso(now))
  }
  return {keys: rows.map((row) => JSON.parse(row.public_jwk) as JWK)}
}

export interface SigningKeyRotation {
  /** The new keys, and when they start signing. */
  current: {kid: string; alg: IdTokenAlg; signs_from: string}[]
  /** The keys they replace: when each stops signing, and until when it stays published. */
  retired: {kid: string; signs_until: string; published_until: string}[]
}

/**
 * Starts new signing keys for every algorithm. They are published at once but sign only after
 * signonConfig.keyPublishLeadSeconds, so every relying party has fetched the key set holding
 * them before it meets a token they signed; until then the old keys sign. `immediately` (after a
 * leak) switches now, and relying parties fetch the set again when they meet the new kid. An old
 * key stays published for one ID-token lifetime plus the allowed clock skew after it stops, so
 * every token it signed validates until it expires; then it goes.
 */
export async function rotateSigningKeys({db, keys}: Pick<StoreParts<Db>, 'db' | 'keys'>, now: Date, {immediately = false} = {}): Promise<SigningKeyRotation> {
  const made = await Promise.all(ID_TOKEN_ALGS.map((alg) => makeKey(alg, keys, now)))
  const switchAt = iso(new Date(now.getTime() + (immediately ? 0 : signonConfig.keyPublishLeadSeconds) * 1000))
  const publishUntil = iso(new Date(Date.parse(switchAt) + (signonConfig.idTokenSeconds + signonConfig.clockSkewSeconds) * 1000))
  const retired = await writeTransaction(db, async (trx) => {
    await repo.deleteUnpublishedKeys(trx, iso(now))
    const kids = await repo.retireSigningKeys(trx, switchAt, publishUntil)
    for (const row of made) await repo.insertSigningKey(trx, row)
    return kids
  })
  return {
    current: made.map(({kid, alg}) => ({kid, alg, signs_from: retired.length === 0 ? iso(now) : switchAt})),
    retired: retired.map((kid) => ({kid, signs_until: switchAt, published_until: publishUntil})),
  }
}

/**
 * The claims of an ID token this store's keys signed, checked for signature and issuer only: an
 * `id_token_hint` at logout may have expired (OpenID Connect RP-Initiated Logout §2), so expiry
 * is not a reason to refuse it. Undefined for anything else. Reads the keys through `reader`.
 */
export async function readOwnIdToken(reader: Db, token: string, issuer: string, now: Date): Promise<Record<string, unknown> | undefined> {
  if (token.length > 8192) return undefined
  const published = await repo.publishedSigningKeys(reader, iso(now))
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
