import {randomBytes} from 'node:crypto'
import {narrow, narrowParts} from '../../../src/store/database.js'
import {generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT} from 'jose'
import {sql} from 'kysely'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {rereadEnvironment} from '../../../src/config.js'
import {signonConfig} from '../../../src/interfaces/signon/config.js'
import {ID_TOKEN_ALGS, type IdTokenAlg, isIdTokenAlg, publishedKeys, readOwnIdToken, rotateSigningKeys, signingKey} from '../../../src/interfaces/signon/signing-keys.js'
import {CLIENT_ID_TOKEN_ALGS} from '../../../src/registry/id-token-algs.js'
import {openStore} from '../../../src/schema.js'
import {rotateSecretKey} from '../../../src/store/key-rotation.js'
import {keyId} from '../../../src/store/secrets.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {reopenableStore} from '../../helpers/store.js'

const ISSUER = 'http://localhost'
/** How long a retired key stays published: one ID-token lifetime plus the clock skew allowed. */
const GRACE = 3600 + 60

interface KeyRow {
  kid: string
  alg: string
  private_key: string
  public_jwk: string
  retired_at: string | null
  publish_until: string | null
}

/** An ID token as the token endpoint would sign it, with `key` (and, unless told, its kid). */
function idToken(key: {kid: string; alg: string; key: CryptoKey}, claims: {iss?: string; sub?: string} = {}, now = new Date()) {
  const at = Math.floor(now.getTime() / 1000)
  return new SignJWT({sub: claims.sub ?? '1'})
    .setProtectedHeader({alg: key.alg, kid: key.kid, typ: 'JWT'})
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience('some-client')
    .setIssuedAt(at)
    .setExpirationTime(at + signonConfig.idTokenSeconds)
    .sign(key.key)
}

describe('ID-token signing keys', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await freshApp()
  })
  afterEach(async () => ctx.store.close())

  const rows = async (): Promise<KeyRow[]> =>
    (await sql<KeyRow>`select kid, alg, private_key, public_jwk, retired_at, publish_until from signing_keys order by created_at, alg`.execute(ctx.db)).rows
  const publishedKids = async () => (await publishedKeys(ctx.store, ctx.clock.now())).keys.map((key) => key.kid).sort()

  it('offers the algorithms the registry lets an operator pick for a client', () => {
    expect([...CLIENT_ID_TOKEN_ALGS]).toEqual([...ID_TOKEN_ALGS])
    expect(ID_TOKEN_ALGS.every(isIdTokenAlg)).toBe(true)
    expect(isIdTokenAlg('HS256')).toBe(false)
    expect(isIdTokenAlg('none')).toBe(false)
  })

  it('makes a key per algorithm on first use and signs with the same one afterwards', async () => {
    expect(await rows()).toEqual([])
    for (const alg of ID_TOKEN_ALGS) {
      const first = await signingKey(ctx.store, alg, ctx.clock.now())
      expect(first.alg).toBe(alg)
      expect(first.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
      ctx.clock.advance(60)
      const again = await signingKey(ctx.store, alg, ctx.clock.now())
      expect(again.kid).toBe(first.kid)
    }
    const stored = await rows()
    expect(stored.map((row) => row.alg).sort()).toEqual(['ES256', 'RS256'])
    expect(stored.every((row) => row.retired_at === null && row.publish_until === null)).toBe(true)
  })

  it('two first uses at once end with one current key per algorithm, and both callers sign with it', async () => {
    const now = ctx.clock.now()
    const calls = await Promise.all(ID_TOKEN_ALGS.flatMap((alg) => [signingKey(ctx.store, alg, now), signingKey(ctx.store, alg, now)]))
    for (const alg of ID_TOKEN_ALGS) {
      const [a, b] = calls.filter((key) => key.alg === alg)
      expect(a!.kid).toBe(b!.kid)
    }
    const stored = await rows()
    expect(stored).toHaveLength(2)
    expect(new Set(stored.map((row) => row.alg))).toEqual(new Set(ID_TOKEN_ALGS))
    expect(stored.map((row) => row.kid).sort()).toEqual([...new Set(calls.map((key) => key.kid))].sort())
  })

  it('keeps the private half sealed under the store key, never as a PEM in the clear', async () => {
    for (const alg of ID_TOKEN_ALGS) await signingKey(ctx.store, alg, ctx.clock.now())
    for (const row of await rows()) {
      expect(row.private_key.startsWith('sealed:v1:')).toBe(true)
      expect(row.private_key).not.toContain('PRIVATE KEY')
      expect(row.public_jwk).not.toContain('PRIVATE KEY')
    }
  })

  it('publishes public JWKs with kid, alg and use, and none of the private members', async () => {
    const made = await Promise.all(ID_TOKEN_ALGS.map((alg) => signingKey(ctx.store, alg, ctx.clock.now())))
    const {keys} = await publishedKeys(ctx.store, ctx.clock.now())
    expect(keys).toHaveLength(2)
    for (const key of keys) {
      const mine = made.find((m) => m.kid === key.kid)!
      expect(key).toMatchObject({kid: mine.kid, alg: mine.alg, use: 'sig', kty: mine.alg === 'RS256' ? 'RSA' : 'EC'})
      if (mine.alg === 'ES256') expect(key.crv).toBe('P-256')
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key, `${mine.alg} ${member}`).not.toHaveProperty(member)
    }
    // What a relying party does with the set: a token the key signed verifies against it.
    for (const mine of made) {
      const jwk = keys.find((key) => key.kid === mine.kid)!
      const {payload} = await jwtVerify(await idToken(mine, {}, ctx.clock.now()), await importJWK(jwk, mine.alg), {issuer: ISSUER, currentDate: ctx.clock.now()})
      expect(payload.sub).toBe('1')
    }
  })

  it('a rotation keeps the old keys published one ID-token lifetime plus the skew, and the next rotation sweeps them', async () => {
    const old = await Promise.all(ID_TOKEN_ALGS.map((alg) => signingKey(ctx.store, alg, ctx.clock.now())))
    ctx.clock.advance(600)
    const rotatedAt = ctx.clock.now()
    const rotation = await rotateSigningKeys(ctx.store, rotatedAt, {immediately: true})
    const until = new Date(rotatedAt.getTime() + GRACE * 1000).toISOString()
    expect(rotation.current.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256'])
    expect(rotation.retired.map((key) => key.kid).sort()).toEqual(old.map((key) => key.kid).sort())
    expect(rotation.retired.every((key) => key.published_until === until)).toBe(true)

    // New ID tokens are signed with the new keys; the old ones are still in the set.
    for (const alg of ID_TOKEN_ALGS) {
      const current = await signingKey(ctx.store, alg, ctx.clock.now())
      expect(current.kid).toBe(rotation.current.find((key) => key.alg === alg)!.kid)
    }
    const both = [...old.map((key) => key.kid), ...rotation.current.map((key) => key.kid)].sort()
    expect(await publishedKids()).toEqual(both)

    ctx.clock.advance(GRACE - 1)
    expect(await publishedKids()).toEqual(both)
    ctx.clock.advance(1)
    expect(await publishedKids()).toEqual(rotation.current.map((key) => key.kid).sort())
    // Unpublished, but still stored until a rotation clears them out.
    expect(await rows()).toHaveLength(4)

    const next = await rotateSigningKeys(ctx.store, ctx.clock.now(), {immediately: true})
    expect(next.retired.map((key) => key.kid).sort()).toEqual(rotation.current.map((key) => key.kid).sort())
    const left = await rows()
    expect(left.map((row) => row.kid).sort()).toEqual([...rotation.current, ...next.current].map((key) => key.kid).sort())
    expect(
      left
        .filter((row) => row.retired_at === null)
        .map((row) => row.kid)
        .sort(),
    ).toEqual(next.current.map((key) => key.kid).sort())
  })

  it('a rotation publishes the new keys ten minutes before they sign; the old ones sign until then', async () => {
    const old = await Promise.all(ID_TOKEN_ALGS.map((alg) => signingKey(ctx.store, alg, ctx.clock.now())))
    const rotatedAt = ctx.clock.now()
    const rotation = await rotateSigningKeys(ctx.store, rotatedAt)
    const switchAt = new Date(rotatedAt.getTime() + 600_000).toISOString()
    expect(rotation.current.every((key) => key.signs_from === switchAt)).toBe(true)
    expect(rotation.retired.every((key) => key.signs_until === switchAt)).toBe(true)
    expect(rotation.retired.every((key) => key.published_until === new Date(Date.parse(switchAt) + GRACE * 1000).toISOString())).toBe(true)
    // Published at once, beside the keys that still sign.
    expect(await publishedKids()).toEqual([...old, ...rotation.current].map((key) => key.kid).sort())
    ctx.clock.advance(599)
    for (const [i, alg] of ID_TOKEN_ALGS.entries()) expect((await signingKey(ctx.store, alg, ctx.clock.now())).kid).toBe(old[i]!.kid)
    ctx.clock.advance(1)
    for (const alg of ID_TOKEN_ALGS) expect((await signingKey(ctx.store, alg, ctx.clock.now())).kid).toBe(rotation.current.find((key) => key.alg === alg)!.kid)
    ctx.clock.advance(GRACE - 1)
    expect(await publishedKids()).toHaveLength(4)
    ctx.clock.advance(1)
    expect(await publishedKids()).toEqual(rotation.current.map((key) => key.kid).sort())
  })

  it('a second rotation before the first one switched: each key signs in turn, none before it was published', async () => {
    const first = await signingKey(ctx.store, 'RS256', ctx.clock.now())
    const one = await rotateSigningKeys(ctx.store, ctx.clock.now())
    ctx.clock.advance(300)
    const two = await rotateSigningKeys(ctx.store, ctx.clock.now())
    const kidOf = (rotation: typeof one) => rotation.current.find((key) => key.alg === 'RS256')!.kid
    expect((await signingKey(ctx.store, 'RS256', ctx.clock.now())).kid).toBe(first.kid)
    ctx.clock.advance(300)
    expect((await signingKey(ctx.store, 'RS256', ctx.clock.now())).kid).toBe(kidOf(one))
    ctx.clock.advance(300)
    expect((await signingKey(ctx.store, 'RS256', ctx.clock.now())).kid).toBe(kidOf(two))
  })

  it('the first read of the key set makes a key for every algorithm, before any ID token needs one', async () => {
    const published = await publishedKeys(ctx.store, ctx.clock.now())
    expect(published.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'RS256'])
    for (const alg of ID_TOKEN_ALGS) expect(published.keys.map((key) => key.kid)).toContain((await signingKey(ctx.store, alg, ctx.clock.now())).kid)
  })

  it('a first rotation on a store without keys retires nothing', async () => {
    const rotation = await rotateSigningKeys(ctx.store, ctx.clock.now())
    expect(rotation.retired).toEqual([])
    expect(await publishedKids()).toEqual(rotation.current.map((key) => key.kid).sort())
  })

  it('reads back an ID token signed by a current or a retired-but-published key, and nothing else', async () => {
    const now = () => ctx.clock.now()
    const read = (token: string) => readOwnIdToken(ctx.db, token, ISSUER, now())
    const old: Record<IdTokenAlg, Awaited<ReturnType<typeof signingKey>>> = {
      RS256: await signingKey(ctx.store, 'RS256', now()),
      ES256: await signingKey(ctx.store, 'ES256', now()),
    }
    const oldTokens = await Promise.all(ID_TOKEN_ALGS.map((alg) => idToken(old[alg], {sub: `old-${alg}`}, now())))
    for (const [i, alg] of ID_TOKEN_ALGS.entries()) expect(await read(oldTokens[i]!)).toMatchObject({iss: ISSUER, sub: `old-${alg}`})

    await rotateSigningKeys(ctx.store, now(), {immediately: true})
    ctx.clock.advance(GRACE - 1)
    // Expired by now (an hour old): a logout's hint may be, so only the signature and issuer count.
    for (const [i, alg] of ID_TOKEN_ALGS.entries()) expect(await read(oldTokens[i]!)).toMatchObject({sub: `old-${alg}`})
    for (const alg of ID_TOKEN_ALGS) {
      const current = await signingKey(ctx.store, alg, now())
      expect(current.kid).not.toBe(old[alg].kid)
      expect(await read(await idToken(current, {sub: `new-${alg}`}, now()))).toMatchObject({sub: `new-${alg}`})
      // Another issuer's token signed by our own key is not ours.
      expect(await read(await idToken(current, {iss: 'https://elsewhere.example'}, now()))).toBeUndefined()
      // A key of someone else's, even under our key's kid, is not ours.
      const foreign = await generateKeyPair(alg)
      expect(await read(await idToken({kid: current.kid, alg, key: foreign.privateKey}, {}, now()))).toBeUndefined()
    }
    expect(await read('not a token')).toBeUndefined()
    expect(await read('')).toBeUndefined()

    // Once the retired keys leave the published set, their tokens are no longer recognized.
    ctx.clock.advance(1)
    for (const token of oldTokens) expect(await read(token)).toBeUndefined()
  })
})

describe('ID-token signing keys and rotate-secret-key', () => {
  const savedKey = process.env.MEDPANEL_SECRET_KEY
  afterEach(() => {
    if (savedKey === undefined) delete process.env.MEDPANEL_SECRET_KEY
    else process.env.MEDPANEL_SECRET_KEY = savedKey
    rereadEnvironment()
    vi.resetModules()
  })

  it('re-seals the private halves: a new process with only the new store key signs with the same keys', async () => {
    // The keys come from MEDPANEL_SECRET_KEY on both stores here, so each open below can be given
    // its own (a SQLite file would otherwise use a key file, a PostgreSQL store always uses the variable).
    const oldKey = randomBytes(32)
    const newKey = randomBytes(32)
    const place = await reopenableStore()
    try {
      process.env.MEDPANEL_SECRET_KEY = oldKey.toString('base64')
      rereadEnvironment()
      const first = await openStore(place.options)
      const made = await Promise.all(ID_TOKEN_ALGS.map((alg) => signingKey(narrowParts(first), alg, new Date())))
      const sealedBefore = (await sql<{private_key: string}>`select private_key from signing_keys`.execute(first.db)).rows
      expect(sealedBefore.every((row) => row.private_key.startsWith(`sealed:v1:${keyId(oldKey)}:`))).toBe(true)
      await first.close()

      // The operator puts the new key first and keeps the old one after it while rotating.
      process.env.MEDPANEL_SECRET_KEY = `${newKey.toString('base64')},${oldKey.toString('base64')}`
      rereadEnvironment()
      const rotating = await openStore(place.options)
      const rotation = await rotateSecretKey(rotating)
      expect(rotation.key_id).toBe(keyId(newKey))
      expect(rotation.resealed).toBe(ID_TOKEN_ALGS.length)
      const sealedAfter = (await sql<{private_key: string}>`select private_key from signing_keys`.execute(rotating.db)).rows
      expect(sealedAfter.every((row) => row.private_key.startsWith(`sealed:v1:${keyId(newKey)}:`))).toBe(true)
      await rotating.close()

      // A process started afterwards, with the old key gone: a module graph of its own, so no
      // private key opened above is cached, and the store opened again.
      process.env.MEDPANEL_SECRET_KEY = newKey.toString('base64')
      vi.resetModules()
      const fresh = {
        db: await import('../../../src/schema.js'),
        keys: await import('../../../src/interfaces/signon/signing-keys.js'),
      }
      const later = await fresh.db.openStore(place.options)
      try {
        const now = new Date()
        const {keys} = await fresh.keys.publishedKeys(narrowParts(later), now)
        for (const before of made) {
          const key = await fresh.keys.signingKey(narrowParts(later), before.alg, now)
          expect(key.kid).toBe(before.kid)
          const token = await idToken(key, {sub: 'after-rotation'}, now)
          const jwk = keys.find((k: JWK) => k.kid === key.kid)!
          await expect(jwtVerify(token, await importJWK(jwk, key.alg), {issuer: ISSUER, currentDate: now})).resolves.toBeDefined()
          expect(await fresh.keys.readOwnIdToken(narrow(later.db), token, ISSUER, now)).toMatchObject({sub: 'after-rotation'})
        }
      } finally {
        await later.close()
      }
    } finally {
      place.drop()
    }
  })
})
