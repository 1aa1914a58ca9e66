import {defineMetrics} from '../metrics/define.js'

/**
 * What a revoked token is counted under: where it came from, read from its row (a code's family,
 * the client's own, an operator's issue-token). A token minted by a refresh belongs to its code's
 * family and is counted as authorization_code; `refresh_token` is kept, at 0, so that the series
 * dashboards and alerts were written against stay.
 */
const REVOKED_ORIGINS = ['authorization_code', 'refresh_token', 'client_credentials', 'operator'] as const

/**
 * The codes sign-on hands out, and the tokens this layer revokes (whoever asked for the
 * revocation). The tokens issued are counted by sign-on, by the grant that issued them
 * (src/interfaces/signon/metrics.ts), so that a new grant needs no line here.
 */
export const grantMetrics = defineMetrics('grants', (kit) => ({
  codesIssued: kit.single('signon_codes_issued_total', 'Authorization codes issued (a member allowed a client, on the consent page or by prompt=none)'),
  tokensRevoked: kit.children(
    'signon_tokens_revoked_total',
    'Access tokens revoked by the service (RFC 7009, a taken-back consent, a reused code or refresh token), by the grant type they came from',
    'grant_type',
    REVOKED_ORIGINS,
  ),
}))
