import {AppError} from '../../errors.js'
import type {LiveToken} from '../../grants/service.js'

/** Token info (GET /oauth/token/info): what the presented token is. */
export interface TokenInfo {
  resource_owner_id: number | null
  scopes: string[]
  expires_in_seconds: number | null
  application: {uid: string}
  created_at: number
}

export function tokenInfo(token: LiveToken): TokenInfo {
  return {
    resource_owner_id: token.memberId,
    scopes: token.scopes,
    expires_in_seconds: token.expiresInSeconds,
    application: {uid: token.clientId},
    created_at: token.createdAt,
  }
}

/** Member info (GET /oauth/user/info): the member a token with the profile scope acts for. */
export interface MemberInfo {
  first_name: string
  last_name: string
  country_of_practice: string
  primary_specialty: string
}

export function memberInfo(token: LiveToken): MemberInfo {
  // RFC 6750 §3: every refusal of a bearer token names the problem in WWW-Authenticate too.
  if (!token.member) {
    throw new AppError('invalid_token', 'The access token does not act for a member', {challenge: {scheme: 'Bearer', error: 'invalid_token'}})
  }
  if (!token.scopes.includes('profile')) {
    throw new AppError('insufficient_scope', 'The access token lacks the profile scope', {challenge: {scheme: 'Bearer', error: 'insufficient_scope', scope: 'profile'}})
  }
  return {
    first_name: token.member.first_name,
    last_name: token.member.last_name,
    country_of_practice: token.member.country,
    primary_specialty: token.member.specialty,
  }
}
