import {narrow} from '../../store/database.js'
import {signonConfig} from './config.js'
import * as grants from '../../grants/repository.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import type {Client} from '../../registry/tables.js'
import type {SignonDb as Db} from './tables.js'
import {OFFLINE_ACCESS} from './scopes.js'

/** Whether a grant's scopes ask for a refresh token (offline_access, only ever on an OpenID request). */
export function wantsRefreshToken(scopes: readonly string[]): boolean {
  return scopes.includes(OFFLINE_ACCESS)
}

/**
 * Whether a request proves the key a refresh token is bound to (a public client's family, RFC 9449
 * §5): `proofJkt` is the thumbprint of the key of the request's checked DPoP proof, or null
 * without one. Undefined when it does, or the token is unbound; else why not. Every endpoint that
 * acts on a refresh token (a refresh, a revocation) asks this before it acts, so whoever holds a
 * copy without the key can neither use the token nor burn it for its owner.
 */
export function refreshKeyRefusal(boundJkt: string | null, proofJkt: string | null): string | undefined {
  if (boundJkt === null || boundJkt === proofJkt) return undefined
  return proofJkt === null
    ? 'refresh token is bound to a DPoP key: send a DPoP proof signed with that key'
    : 'refresh token is bound to another DPoP key than the one the DPoP proof is signed with'
}

/** How long the access tokens of an authorization with a refresh token live: short unless the client agreed otherwise. */
export function refreshedAccessTtl(client: Client): number {
  return client.token_ttl ?? signonConfig.refreshedAccessTokenSeconds
}

export interface RefreshGrant {
  /** The hash of the authorization code the family began with. */
  family: string
  clientId: string
  memberId: number
  scopes: string
  authTime: string | null
  /** The sign-in session the family began in: its ID tokens' sid. */
  sid: string | null
  /** The family's absolute end; a new family's is its start plus the absolute lifetime. */
  familyExpiresAt?: string
  /** The DPoP key the family is bound to (a public client's), or null. */
  dpopJkt: string | null
}

/**
 * Makes and stores a refresh token of the family and answers it; only its hash is kept. It dies
 * unused after the idle lifetime, and never outlives the family's absolute end.
 */
export async function issueRefreshToken(db: Db, grant: RefreshGrant, now: Date): Promise<string> {
  const token = randomToken(32)
  const familyEnd = grant.familyExpiresAt ?? iso(new Date(now.getTime() + signonConfig.refreshTokenAbsoluteSeconds * 1000))
  const idleEnd = Math.min(now.getTime() + signonConfig.refreshTokenIdleSeconds * 1000, Date.parse(familyEnd))
  await grants.insertRefreshToken(narrow(db), {
    token_hash: sha256(token),
    family: grant.family,
    client_id: grant.clientId,
    member_id: grant.memberId,
    scopes: grant.scopes,
    auth_time: grant.authTime,
    sid: grant.sid,
    created_at: iso(now),
    expires_at: iso(new Date(idleEnd)),
    family_expires_at: familyEnd,
    dpop_jkt: grant.dpopJkt,
  })
  return token
}
