import {AppError} from '../../../errors.js'
import {narrow} from '../../../store/database.js'
import * as grants from '../../../grants/repository.js'
import {iso} from '../../../lib/clock.js'
import {sha256} from '../../../lib/hashing.js'
import {getMemberRow, hasGrant} from '../../../registry/service.js'
import {writeTransaction} from '../../../store/transactions.js'
import {issueRefreshToken, refreshedAccessTtl, refreshKeyRefusal} from '../refresh-tokens.js'
import {scopeList} from '../scopes.js'
import {mintToken} from '../tokens.js'
import {accessTokenSigner} from '../jwt-access-tokens.js'
import {memberAnswer} from './answer.js'
import type {GrantFlow} from './grant.js'

const invalidGrant = (why: string) => new AppError('invalid_grant', why)

/**
 * refresh_token (RFC 6749 §6), with rotation (RFC 9700 §4.14.2): every refresh spends the token
 * and answers a new one of the same family, with a new access token. A spent token presented
 * again means two parties hold the family (a thief and the client), so the whole family ends:
 * every access and refresh token descended from the same authorization. A refresh may ask for
 * fewer scopes than were granted, never more; the new refresh token keeps the whole grant. A
 * refused request (a scope beyond the grant, an expired token, an inactive member) spends nothing.
 */
export const refreshToken: GrantFlow<'refresh_token' | 'scope' | 'resource'> = {
  grantType: 'refresh_token',
  parameters: ['refresh_token', 'scope', 'resource'],
  async exchange(request) {
    const {db, form, authenticate, dpopJkt, issuer, now, metrics} = request
    if (!form.refresh_token) throw new AppError('invalid_request', 'refresh_token is required')
    const client = await authenticate()
    if (!hasGrant(client, 'signon')) throw new AppError('unauthorized_client', 'this client may not use the refresh_token grant')
    const jwt = await accessTokenSigner(request, client, issuer, form.resource, now)
    const hash = sha256(form.refresh_token)
    const stamp = iso(now)
    const outcome = await writeTransaction(db, async (trx) => {
      const row = await grants.findRefreshToken(narrow(trx), hash)
      if (!row || row.client_id !== client.id) return invalidGrant('refresh token is invalid or was issued to another client')
      if (row.revoked_at !== null) return invalidGrant('refresh token was revoked')
      // Before it is spent: whoever holds a copy without the key cannot use it, nor burn it for its owner.
      const unproven = refreshKeyRefusal(row.dpop_jkt, dpopJkt)
      if (unproven !== undefined) return invalidGrant(unproven)
      const replay = async () => {
        await grants.revokeTokens(narrow(trx), {codeHash: row.family}, stamp, metrics)
        return invalidGrant('refresh token was already used; every token of its authorization is now revoked')
      }
      if (row.used_at !== null) return replay()
      // Every refusal of the request itself comes before the token is spent, so the client can
      // send it again corrected: a retry with the same token must not read as a replay.
      if (row.expires_at <= stamp) return invalidGrant('refresh token has expired')
      const granted = row.scopes.split(' ')
      const asked = form.scope === undefined ? granted : scopeList(form.scope)
      const beyond = asked.filter((scope) => !granted.includes(scope))
      if (beyond.length > 0) return new AppError('invalid_scope', `scope goes beyond what the member allowed: ${beyond.join(' ')}`)
      const member = await getMemberRow(narrow(trx), row.member_id)
      if (member.active !== 1) return invalidGrant('the member is no longer active')
      // Spent here, in the transaction that read it: a refresh racing this one finds it taken.
      if (!(await grants.useRefreshToken(narrow(trx), hash, stamp))) return replay()
      const minted = await mintToken(trx, client, row.member_id, asked.join(' '), row.family, now, {ttlSeconds: refreshedAccessTtl(client), dpopJkt, jwt, authTime: row.auth_time})
      const grant = {
        family: row.family,
        clientId: client.id,
        memberId: row.member_id,
        scopes: row.scopes,
        authTime: row.auth_time,
        sid: row.sid,
        familyExpiresAt: row.family_expires_at,
        dpopJkt: row.dpop_jkt,
      }
      return {minted: {...minted, refresh_token: await issueRefreshToken(trx, grant, now)}, member, authTime: row.auth_time, sid: row.sid}
    })
    // Returned, not thrown, so the family's revocation above commits.
    if (outcome instanceof AppError) throw outcome
    // Core §12.2: a new ID token for the same member and sign-in (the same sid), without a nonce.
    return memberAnswer(request, outcome.minted, {issuer, client, member: outcome.member, nonce: null, authTime: outcome.authTime, sid: outcome.sid, now})
  },
}
