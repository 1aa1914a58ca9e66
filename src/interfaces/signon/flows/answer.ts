import type {Client} from '../../../registry/tables.js'
import type {StoreParts} from '../../../store/database.js'
import type {SignonDb as Db} from '../tables.js'
import {noteIdToken} from '../backchannel-logout.js'
import {type ClaimsMember, issueIdToken, OPENID} from '../oidc.js'
import {openidAnswer, type TokenResponse} from '../tokens.js'

/**
 * A member's token answer, as every grant that issues one ends: unchanged for a plain OAuth grant;
 * for one with `openid`, an ID token beside it and the OpenID wire format (tokens.ts,
 * openidAnswer). Called after the grant's transaction has committed: making the first signing key
 * is a write of its own. The ID token names the sign-in session (sid), and the session remembers
 * the client got one, so its end is told to the client (back-channel logout).
 */
export async function memberAnswer(
  store: StoreParts<Db>,
  minted: TokenResponse,
  id: {issuer: string; client: Client; member: ClaimsMember; nonce: string | null; authTime: string | null; sid: string | null; now: Date},
): Promise<TokenResponse> {
  const scopes = minted.scope.split(' ')
  if (!scopes.includes(OPENID)) return minted
  const idToken = await issueIdToken(store, {
    issuer: id.issuer,
    clientId: id.client.id,
    alg: id.client.id_token_alg,
    member: id.member,
    scopes,
    nonce: id.nonce,
    authTime: id.authTime,
    sid: id.sid,
    accessToken: minted.access_token,
    now: id.now,
  })
  if (id.sid !== null) await noteIdToken(store.db, id.sid, id.client.id, id.member.id, id.now)
  return openidAnswer({...minted, id_token: idToken})
}
