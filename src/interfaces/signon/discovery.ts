import {CLAIMS_SUPPORTED, OPENID} from './oidc.js'
import {GRANT_FLOWS} from './grant-types.js'
import {CLIENT_SCOPES, MEMBER_SCOPES, OFFLINE_ACCESS} from './scopes.js'
import {ID_TOKEN_ALGS} from './signing-keys.js'
import {CLIENT_ASSERTION_ALGS} from '../../registry/client-keys.js'
import {DPOP_ALGS} from '../../grants/dpop.js'
import {RESPONSE_MODES} from './authorization-response.js'

/**
 * The authorization server metadata (RFC 8414) for an issuer, the service's base URL, which is
 * also the OpenID Provider's configuration (OpenID Connect Discovery §3): one document, served at
 * both well-known paths, so the two can never disagree. OAuth and OpenID libraries (openid-client's
 * `discovery()`, oauth4webapi, Authlib) read it instead of being told each endpoint, the
 * authentication methods, that PKCE is S256 only and where the signing keys are. The issuer is
 * fixed when the service starts (never the request's Host), so the document is the same for every
 * request and shared caches may keep it (`public, max-age=3600`, no `Vary: Host`).
 */
export function authorizationServerMetadata(issuer: string, options: {registration?: boolean} = {}) {
  const auth = ['client_secret_basic', 'client_secret_post', 'private_key_jwt']
  // Public clients (browser and native apps) hold no secret: they name themselves with client_id.
  const publicToo = [...auth, 'none']
  const assertionAlgs = [...CLIENT_ASSERTION_ALGS]
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    introspection_endpoint: `${issuer}/oauth/introspect`,
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    jwks_uri: `${issuer}/oauth/jwks`,
    end_session_endpoint: `${issuer}/oauth/end_session`,
    // RFC 9126: clients may push their authorization requests; those registered with
    // --require-pushed-authorization-requests must (each client's own rule, so false here).
    pushed_authorization_request_endpoint: `${issuer}/oauth/par`,
    require_pushed_authorization_requests: false,
    response_types_supported: ['code'],
    response_modes_supported: [...RESPONSE_MODES],
    grant_types_supported: [...GRANT_FLOWS.keys()],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: publicToo,
    token_endpoint_auth_signing_alg_values_supported: assertionAlgs,
    revocation_endpoint_auth_methods_supported: publicToo,
    revocation_endpoint_auth_signing_alg_values_supported: assertionAlgs,
    introspection_endpoint_auth_methods_supported: auth,
    introspection_endpoint_auth_signing_alg_values_supported: assertionAlgs,
    scopes_supported: [OPENID, ...MEMBER_SCOPES, 'email', OFFLINE_ACCESS, ...CLIENT_SCOPES],
    // OpenID Connect: a public subject (the member id; see oidc.ts for why not pairwise).
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...ID_TOKEN_ALGS],
    claims_supported: CLAIMS_SUPPORTED,
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    claims_parameter_supported: false,
    // Absent, these two would mean "supported" (Discovery §3): say plainly they are not.
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    // RFC 9207: every redirect back to the client names this issuer, code or error alike.
    authorization_response_iss_parameter_supported: true,
    // RFC 9449: tokens bound to the key of a DPoP proof, at the token endpoint and every resource.
    dpop_signing_alg_values_supported: [...DPOP_ALGS],
    // OpenID Connect Back-Channel Logout 1.0: clients registered with a back-channel logout URI are
    // posted a logout token, naming the session (sid, also in every ID token), when it ends.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    service_documentation: `${issuer}/docs`,
    // RFC 7591: named only while an operator's initial access token is live (issue-registration-token).
    ...(options.registration ? {registration_endpoint: `${issuer}/oauth/register`} : {}),
  }
}

/** Adds `iss` (RFC 9207) to a redirect back to the client. */
export function withIssuer(location: string, issuer: string): string {
  const url = new URL(location)
  url.searchParams.set('iss', issuer)
  return url.toString()
}
