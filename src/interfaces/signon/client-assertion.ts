import {createLocalJWKSet, decodeJwt, errors, type JSONWebKeySet, type JWTVerifyGetKey, jwtVerify} from 'jose'
import {config} from '../../config.js'
import {signonConfig} from './config.js'
import {clientAuthFailed} from './client-auth-failure.js'
import {iso} from '../../lib/clock.js'
import {CLIENT_ASSERTION_ALGS, jwksSchema} from '../../registry/client-keys.js'
import type {Client} from '../../registry/tables.js'
import type {SignonDb as Db} from './tables.js'
import {partnerTransport, type Transport} from '../../http/outbound.js'
import {spendJti} from '../../grants/replay.js'
import {narrow} from '../../store/database.js'

/**
 * private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): the client proves itself with a JWT it
 * signed with a private key only it holds, checked against the public keys it registered (a JWK
 * Set, or its jwks_uri). Nothing secret is stored here, so a stolen database authenticates nobody.
 *
 * The checks, in order: signed by one of the client's keys with ES256, PS256 or RS256 (never
 * `none`, never HMAC, whatever the header says); `iss` and `sub` the client id; `aud` this
 * issuer or the endpoint called; `exp` not passed (clock skew forgiven) and at most
 * clientAssertionMaxSeconds ahead; `iat`, when present, no further ahead than the clock skew; a
 * `jti` never presented before (kept in the replay store, grants/replay.ts, until the assertion
 * expires, so it holds across every `serve` on the store). Every refusal answers the same (client-auth-failure.ts); its reason
 * is for the log, and never quotes the assertion.
 */

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** A client assertion as a request presented it, with the audiences it may name. */
export interface PresentedAssertion {
  value: string
  /** The issuer and the endpoint's URL: an assertion for another server or endpoint proves nothing here. */
  audiences: string[]
}

const invalid = (why: string, clientId?: string) => clientAuthFailed(`client_assertion: ${why}`, clientId)

/** A client's keys that could not be had (its jwks_uri failed, or it registered none): a reason for the log. */
class KeysUnavailable extends Error {}

/** The client an assertion says it comes from (iss), read before its signature is checked, only to find the keys that check it. */
export function assertionIssuer(assertion: string): string {
  let claims: ReturnType<typeof decodeJwt>
  try {
    claims = decodeJwt(assertion)
  } catch {
    throw invalid('not a signed JWT')
  }
  if (typeof claims.iss !== 'string' || claims.iss === '') throw invalid('has no iss (the client id)')
  return claims.iss
}

/** Checks `assertion` for `client` (whose method is private_key_jwt); throws invalid_client, with the reason for the log. */
export async function verifyClientAssertion(db: Db, client: Client, assertion: PresentedAssertion, now: Date): Promise<void> {
  const skew = signonConfig.clockSkewSeconds
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    ;({payload} = await jwtVerify(assertion.value, keysOf(client, now.getTime()), {
      algorithms: [...CLIENT_ASSERTION_ALGS],
      issuer: client.id,
      subject: client.id,
      audience: assertion.audiences,
      currentDate: now,
      clockTolerance: skew,
      requiredClaims: ['exp', 'jti'],
    }))
  } catch (error) {
    throw invalid(failure(error), client.id)
  }
  const seconds = now.getTime() / 1000
  const max = signonConfig.clientAssertionMaxSeconds
  // Exactly as documented: no skew on top, so an assertion is never good for longer than max.
  if (payload.exp! > seconds + max) throw invalid(`expires too far ahead: at most ${max} seconds from now`, client.id)
  // An assertion issued in the future was made to be kept and used later: refused like a long exp.
  if (payload.iat !== undefined && payload.iat > seconds + skew) throw invalid(`iat is more than ${skew} seconds in the future`, client.id)
  const jti = payload.jti!
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw invalid('jti must be a string of 1 to 256 characters', client.id)
  const spend = {kind: 'client_assertion', issuer: client.id, jti, expiresAt: iso(new Date((payload.exp! + skew) * 1000))} as const
  // Durable: an assertion lives minutes, and nothing else ties it to the moment as DPoP's nonce does.
  const fresh = await spendJti(narrow(db), spend, now, 'durable')
  if (!fresh) throw invalid('this jti was presented before: an assertion is used once', client.id)
}

/** Why jose refused an assertion, in words a client's developer can act on. */
function failure(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'has expired (exp)'
  if (error instanceof errors.JWTClaimValidationFailed)
    return `claim ${error.claim} is not right: ${error.reason === 'check_failed' ? `it must be ${expected(error.claim)}` : error.message}`
  if (error instanceof errors.JOSEAlgNotAllowed) return `alg must be one of ${CLIENT_ASSERTION_ALGS.join(', ')}`
  if (error instanceof errors.JWKSNoMatchingKey) return "no key of the client's matches its kid and alg"
  if (error instanceof errors.JWKSMultipleMatchingKeys) return 'several keys of the client match: give a kid'
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the signature is not by any of the client's keys"
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'not a well-formed signed JWT'
  if (error instanceof KeysUnavailable) return error.message
  return (error as Error).message
}

function expected(claim: string): string {
  if (claim === 'iss' || claim === 'sub') return 'the client id'
  if (claim === 'aud') return "this server's issuer or the endpoint's URL"
  return 'present'
}

/** Key sets of registered JWK Sets, by their text, so a busy client's set is parsed once. */
const localSets = new Map<string, JWTVerifyGetKey>()

/** The keys that may have signed a client's assertion: its registered set, or what its jwks_uri serves. */
function keysOf(client: Client, now: number): JWTVerifyGetKey {
  if (client.jwks !== null) {
    let set = localSets.get(client.jwks)
    if (!set) {
      if (localSets.size >= config.caches.clients) localSets.clear()
      set = createLocalJWKSet(JSON.parse(client.jwks) as JSONWebKeySet)
      localSets.set(client.jwks, set)
    }
    return set
  }
  if (client.jwks_uri === null) throw new KeysUnavailable('the client has no registered keys')
  const uri = client.jwks_uri
  return async (header, token) => {
    let fetched = await remoteSet(uri, false, now)
    try {
      return await fetched.keys(header, token)
    } catch (error) {
      // A kid the copy lacks: the client may have rotated its keys since. Fetch again, once per cooldown.
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error
      fetched = await remoteSet(uri, true, now)
      return fetched.keys(header, token)
    }
  }
}

interface RemoteSet {
  keys: JWTVerifyGetKey
  fetchedAt: number
}

/** Sets fetched from jwks_uris, by URL; the fetch in progress is shared by whoever asks meanwhile. */
const remoteSets = new Map<string, Promise<RemoteSet>>()

/** How jwks_uris are fetched (tests pass their own). */
let transport: Transport = partnerTransport

/** Tests: fetch jwks_uris with `other`, and forget every fetched set. */
export function useJwksTransport(other: Transport): void {
  transport = other
  remoteSets.clear()
}

/** `now`: the request's clock, in milliseconds. */
async function remoteSet(uri: string, unknownKid: boolean, now: number): Promise<RemoteSet> {
  const cached = remoteSets.get(uri)
  if (cached) {
    const set = await cached.catch(() => undefined)
    const age = set === undefined ? Number.POSITIVE_INFINITY : now - set.fetchedAt
    const stale = age > signonConfig.clientJwksCacheSeconds * 1000 || (unknownKid && age > signonConfig.clientJwksCooldownSeconds * 1000)
    if (set && !stale) return set
    // A failed fetch is tried again only after the cooldown, so a client's broken server is not hammered.
    if (!set && now - (failedAt.get(uri) ?? 0) < signonConfig.clientJwksCooldownSeconds * 1000) return cached
  }
  if (remoteSets.size >= config.caches.clients) remoteSets.clear()
  const fetching = fetchSet(uri, now).catch((error: unknown) => {
    failedAt.set(uri, now)
    throw error
  })
  remoteSets.set(uri, fetching)
  return fetching
}

const failedAt = new Map<string, number>()

async function fetchSet(uri: string, now: number): Promise<RemoteSet> {
  let answer: Awaited<ReturnType<Transport['send']>>
  try {
    answer = await transport.send({method: 'GET', url: uri, headers: {accept: 'application/json, application/jwk-set+json'}}, signonConfig.clientJwksFetchTimeoutMs, {
      maxBodyBytes: signonConfig.clientJwksMaxBytes,
    })
  } catch (error) {
    throw new KeysUnavailable(`the client's jwks_uri could not be read: ${(error as Error).message}`)
  }
  if (answer.status !== 200) throw new KeysUnavailable(`the client's jwks_uri answered ${answer.status}`)
  if (answer.truncated) throw new KeysUnavailable(`the client's jwks_uri answered more than ${signonConfig.clientJwksMaxBytes} bytes`)
  let parsed: unknown
  try {
    parsed = JSON.parse(answer.body)
  } catch {
    throw new KeysUnavailable("the client's jwks_uri did not answer JSON")
  }
  const checked = jwksSchema.safeParse(parsed)
  if (!checked.success) throw new KeysUnavailable(`the client's jwks_uri did not answer a JWK Set of public signing keys: ${checked.error.issues[0]?.message ?? 'invalid'}`)
  return {keys: createLocalJWKSet(checked.data as JSONWebKeySet), fetchedAt: now}
}
