import {authorizationCode} from './authorization-code.js'
import {clientCredentials} from './client-credentials.js'
import {refreshToken} from './refresh-token.js'
import type {GrantFlow} from './grant.js'

export type {GrantFlow, GrantParameter, TokenRequest} from './grant.js'
export {grantParameters} from './grant.js'

/**
 * The token endpoint's grants, one module each, as node-oidc-provider keeps them. A new grant is
 * its module and its name in this list: the endpoint, discovery and the metrics read it through
 * ../grant-types.ts.
 */
export const GRANTS: readonly GrantFlow[] = [authorizationCode, refreshToken, clientCredentials]
