import {OIDC_SCOPES} from './oidc.js'

/** What a member's token reads when a request names no scope: the member's profile. */
export const MEMBER_SCOPES = ['profile'] as const
/** What a client may ask a member for: the profile, and with OpenID Connect, who they are and their e-mail. */
export const AUTHORIZE_SCOPES: readonly string[] = [...MEMBER_SCOPES, ...OIDC_SCOPES]
/**
 * OpenID Connect's request for a refresh token (Core §11): only on a request with `openid`, shown
 * on the consent page as keeping access while the member is away.
 */
export const OFFLINE_ACCESS = 'offline_access'

/** What a client's own token (client_credentials) may hold. */
export const CLIENT_SCOPES = ['pulses'] as const

/** Splits a space-separated scope parameter; repeated values count once. */
export function scopeList(scope: string | undefined): string[] {
  return [...new Set((scope ?? '').split(' ').filter(Boolean))]
}
