import {AppError} from '../../../errors.js'
import {narrow} from '../../../store/database.js'
import * as grants from '../../../grants/repository.js'
import {iso} from '../../../lib/clock.js'
import {sha256} from '../../../lib/hashing.js'
import {getMemberRow, hasGrant} from '../../../registry/service.js'
import {writeTransaction} from '../../../store/transactions.js'
import {isValidVerifier, verifierMatches} from '../pkce.js'
import {issueRefreshToken, refreshedAccessTtl, wantsRefreshToken} from '../refresh-tokens.js'
import {isPublicClient} from '../client-auth.js'
import {mintToken} from '../tokens.js'
import {accessTokenSigner} from '../jwt-access-tokens.js'
import {memberAnswer} from './answer.js'
import type {GrantFlow} from './grant.js'

const invalidGrant = (why: string) => new AppError('invalid_grant', why)

/**
 * authorization_code (RFC 6749 §4.1.3), checked in this order: fields → client → code → owner →
 * expiry → redirect URI → PKCE → consume. The code is consumed before any token exists;
 * presenting a used code again revokes what it issued (RFC 6749 §4.1.2).
 */
export const authorizationCode: GrantFlow<'code' | 'redirect_uri' | 'code_verifier' | 'resource'> = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier', 'resource'],
  async exchange(request) {
    const {db, form, authenticate, dpopJkt, issuer, now, metrics} = request
    if (!form.code) throw new AppError('invalid_request', 'code is required')
    if (!form.redirect_uri) throw new AppError('invalid_request', 'redirect_uri is required')
    const verifier = form.code_verifier
    if (verifier !== undefined && !isValidVerifier(verifier)) throw new AppError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters')
    const client = await authenticate()
    if (!hasGrant(client, 'signon')) throw new AppError('unauthorized_client', 'this client may not use the authorization_code grant')
    const jwt = await accessTokenSigner(request, client, issuer, form.resource, now)
    const codeHash = sha256(form.code)
    const redirectUri = form.redirect_uri
    const stamp = iso(now)
    const outcome = await writeTransaction(db, async (trx) => {
      const code = await grants.findCode(narrow(trx), codeHash)
      if (!code || code.client_id !== client.id) return invalidGrant('authorization code is invalid or was issued to another client')
      if (code.used_at !== null) {
        await grants.revokeTokens(narrow(trx), {codeHash}, stamp, metrics)
        return invalidGrant('authorization code has already been used; tokens issued from it are now revoked')
      }
      if (code.superseded_at !== null) return invalidGrant('authorization code was replaced by a newer one or revoked')
      if (code.expires_at <= stamp) return invalidGrant('authorization code has expired')
      if (code.redirect_uri !== redirectUri) return invalidGrant('redirect_uri does not match the one used to obtain the code')
      if (code.code_challenge !== null) {
        if (verifier === undefined) return invalidGrant('code_verifier is required for this code')
        if (!verifierMatches(verifier, code.code_challenge)) return invalidGrant('code_verifier does not match the code_challenge')
      } else if (verifier !== undefined) {
        return invalidGrant('code_verifier sent for a code that was issued without a code_challenge')
      }
      if (code.dpop_jkt !== null && code.dpop_jkt !== dpopJkt) return invalidGrant('authorization code is bound to a DPoP key (dpop_jkt): send a DPoP proof signed with that key')
      if (!(await grants.consumeCode(narrow(trx), codeHash, stamp))) return invalidGrant('authorization code has already been used')
      const member = await getMemberRow(narrow(trx), code.member_id)
      if (member.active !== 1) return invalidGrant('the member is no longer active')
      const scopes = code.scopes.split(' ')
      // The token request's resource, else the authorization request's, else the issuer (RFC 8707 §2).
      const signer = jwt && {...jwt, audience: form.resource ?? code.resource ?? issuer}
      const answer = {member, nonce: code.nonce, authTime: code.auth_time, sid: code.sid}
      if (!wantsRefreshToken(scopes))
        return {minted: await mintToken(trx, client, code.member_id, code.scopes, codeHash, now, {dpopJkt, jwt: signer, authTime: code.auth_time}), ...answer}
      // offline_access: a short-lived access token, and the first refresh token of the family.
      const minted = await mintToken(trx, client, code.member_id, code.scopes, codeHash, now, {
        ttlSeconds: refreshedAccessTtl(client),
        dpopJkt,
        jwt: signer,
        authTime: code.auth_time,
      })
      // The family keeps the sign-in session's sid: every refreshed ID token names the same session.
      // A public client's refresh tokens are bound to its DPoP key (RFC 9449 §5): it has no other proof of itself.
      const grant = {
        family: codeHash,
        clientId: client.id,
        memberId: code.member_id,
        scopes: code.scopes,
        authTime: code.auth_time,
        sid: code.sid,
        dpopJkt: isPublicClient(client) ? dpopJkt : null,
      }
      return {minted: {...minted, refresh_token: await issueRefreshToken(trx, grant, now)}, ...answer}
    })
    // Errors are returned, not thrown, so the replay revocation above commits.
    if (outcome instanceof AppError) throw outcome
    // Core §3.1.3.3: the nonce of the authorization request, echoed.
    const {minted, ...answer} = outcome
    return memberAnswer(request, minted, {issuer, client, ...answer, now})
  },
}
