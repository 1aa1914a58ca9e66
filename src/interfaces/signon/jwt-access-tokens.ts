import {SignJWT} from 'jose'
import {AppError} from '../../errors.js'
import type {Client} from '../../registry/tables.js'
import type {StoreParts} from '../../store/database.js'
import {signonConfig} from './config.js'
import {isIdTokenAlg, type SigningKey, signingKey} from './signing-keys.js'
import type {SignonDb as Db} from './tables.js'

/**
 * RFC 8707 §2: a resource indicator is an absolute URI without a fragment. Any such URI is taken:
 * the audience only tells a resource server that the token was meant for it, and a client asking
 * for another server's audience gains nothing it could not get with that server's own name.
 */
export function readResource(value: string | undefined): string | null {
  if (value === undefined) return null
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new AppError('invalid_target', 'resource must be an absolute URI')
  }
  if (value.includes('#') || url.hash !== '') throw new AppError('invalid_target', 'resource must not contain a fragment')
  return value
}

/** What signs a JWT access token, fetched before the grant's transaction (making a first key is a write of its own). */
export interface AccessTokenSigner {
  key: SigningKey
  issuer: string
  /** The `aud`: the resource asked for, or the issuer. */
  audience: string
}

/**
 * The signer for a client whose access tokens are JWTs (RFC 9068), or undefined for an opaque
 * client. The resource is read for every client, so a bad one is refused the same way for both.
 */
export async function accessTokenSigner(store: StoreParts<Db>, client: Client, issuer: string, resource: string | undefined, now: Date): Promise<AccessTokenSigner | undefined> {
  const audience = readResource(resource) ?? issuer
  if (client.access_token_format !== 'jwt') return undefined
  const alg = isIdTokenAlg(client.id_token_alg) ? client.id_token_alg : 'RS256'
  return {key: await signingKey(store, alg, now), issuer, audience}
}

/** The lifetime of a JWT access token: the one asked for, capped (see signonConfig.jwtAccessTokenMaxSeconds). */
export function jwtAccessTokenSeconds(ttlSeconds: number | null): number {
  return ttlSeconds === null ? signonConfig.jwtAccessTokenMaxSeconds : Math.min(ttlSeconds, signonConfig.jwtAccessTokenMaxSeconds)
}

export interface AccessTokenClaims {
  clientId: string
  /** The member the token acts for, or null for the client itself (its `sub` is then the client id, RFC 9068 §2.2). */
  memberId: number | null
  scope: string
  jti: string
  ttlSeconds: number
  /** When the member signed in (ISO 8601), when known. */
  authTime?: string | null | undefined
  dpopJkt: string | null
  now: Date
}

/** A signed RFC 9068 access token: typ at+jwt, with the claims §2.2 asks for. */
export function signAccessToken(signer: AccessTokenSigner, claims: AccessTokenClaims): Promise<string> {
  const iat = Math.floor(claims.now.getTime() / 1000)
  const body: Record<string, unknown> = {client_id: claims.clientId, scope: claims.scope}
  if (claims.authTime) body.auth_time = Math.floor(Date.parse(claims.authTime) / 1000)
  if (claims.dpopJkt !== null) body.cnf = {jkt: claims.dpopJkt}
  return new SignJWT(body)
    .setProtectedHeader({alg: signer.key.alg, kid: signer.key.kid, typ: 'at+jwt'})
    .setIssuer(signer.issuer)
    .setAudience(signer.audience)
    .setSubject(claims.memberId === null ? claims.clientId : String(claims.memberId))
    .setJti(claims.jti)
    .setIssuedAt(iat)
    .setExpirationTime(iat + claims.ttlSeconds)
    .sign(signer.key.key)
}
