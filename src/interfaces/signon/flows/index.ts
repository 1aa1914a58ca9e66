import {authorizationCode} from './authorization-code.js'
import {clientCredentials} from './client-credentials.js'
import {refreshToken} from './refresh-token.js'
import type {GrantFlow} from './grant.js'

export type {GrantFlow, TokenRequest} from './grant.js'

/**
 * The token endpoint's grants by grant_type, as node-oidc-provider keeps them: the route looks
 * the request up here, and discovery lists the keys (grant_types_supported).
 */
export const GRANT_FLOWS: ReadonlyMap<string, GrantFlow> = new Map([authorizationCode, refreshToken, clientCredentials].map((flow) => [flow.grantType, flow]))
