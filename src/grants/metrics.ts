import {defineMetrics} from '../metrics/define.js'

/** The kinds of grant a token is counted under: the token endpoint's grant types, and the operator's issue-token. */
export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials', 'operator'] as const
export type GrantType = (typeof GRANT_TYPES)[number]

/**
 * The codes and tokens sign-on hands out, counted where they are named: sign-on counts those it
 * issues, this layer those it revokes (whoever asked for the revocation).
 */
export const grantMetrics = defineMetrics('grants', (kit) => ({
  codesIssued: kit.single('signon_codes_issued_total', 'Authorization codes issued (a member allowed a client, on the consent page or by prompt=none)'),
  tokensIssued: kit.children('signon_tokens_issued_total', 'Access tokens issued, by grant type (operator: issue-token)', 'grant_type', GRANT_TYPES),
  tokensRevoked: kit.children(
    'signon_tokens_revoked_total',
    'Access tokens revoked (RFC 7009, a taken-back consent, a reused code, a member or client change), by the grant type they came from',
    'grant_type',
    GRANT_TYPES,
  ),
}))
