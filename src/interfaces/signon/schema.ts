import {MAX_ACCESS_TOKEN_CHARS} from '../../grants/service.js'
import {z} from 'zod'
import {DEMO_BASE_URL, DEMO_CLIENT_ID} from '../../demo-data.js'
import {useOpenApi} from '../../lib/zod.js'
import {config} from '../../config.js'

useOpenApi()

/** One query or form value: a repeated parameter arrives as an array and fails here. */
const param = (max = 2048) => z.string({error: 'must be given once'}).max(max, `must be at most ${max} characters`).optional()

export const authorizeQuery = z.object({
  client_id: param(128).openapi({description: 'The client id issued at registration', example: DEMO_CLIENT_ID}),
  redirect_uri: param().openapi({description: "One of the client's registered redirect URIs, exactly", example: `${DEMO_BASE_URL}/demo/callback`}),
  response_type: param(32).openapi({example: 'code'}),
  response_mode: param(32).openapi({
    description:
      'query (the default): the answer comes back as a redirect; form_post: as a form the browser posts to the redirect URI. Any other value is refused (invalid_request)',
  }),
  state: param(1024).openapi({description: 'Opaque value returned unchanged on the redirect', example: 'af0ifjsldkj'}),
  scope: param(256).openapi({example: 'profile'}),
  code_challenge: param(128).openapi({description: 'PKCE S256 challenge (RFC 7636)', example: 'E9Melhoa2OwvFrEMTJguCQaoeEKmfhB4jv_1ZdOrPV8'}),
  code_challenge_method: param(16).openapi({example: 'S256'}),
  nonce: param(512).openapi({description: 'OpenID Connect: echoed in the ID token, exactly'}),
  prompt: param(64).openapi({description: 'OpenID Connect: none (no page: login_required or consent_required if one is needed), login (sign in again), consent'}),
  max_age: param(10).openapi({description: 'OpenID Connect: seconds; an older sign-in is made again'}),
  login_hint: param(254).openapi({description: "OpenID Connect: the member's e-mail, filled in on the sign-in form"}),
  resource: param(2048).openapi({description: "RFC 8707: the absolute URI of the resource server the access token is for (a JWT access token's aud)"}),
  dpop_jkt: param(64).openapi({description: 'DPoP (RFC 9449 §10): the JWK thumbprint of the key the code is bound to; only a token request with a proof of that key exchanges it'}),
  request: param(8192).openapi({description: 'Not supported: refused with request_not_supported'}),
  request_uri: param().openapi({
    description:
      'A pushed authorization request (RFC 9126): the request_uri /oauth/par answered; with it only client_id counts, every other parameter comes from the pushed request',
  }),
})

export const consentForm = authorizeQuery.extend({
  csrf_token: param(256),
  decision: param(16).openapi({description: 'allow or deny'}),
})

export const signInForm = authorizeQuery.extend({
  csrf_token: param(256),
  email: param(254),
  password: param(1024),
  return_to: param(64).openapi({description: 'After signing in, go to this medpanel page instead of the consent page (only /oauth/authorized_applications)'}),
})

export const applicationForm = z.object({
  csrf_token: param(256),
  client_id: param(128).openapi({description: 'The application to take access back from'}),
  confirm: param(8).openapi({description: 'yes takes the access back; without it the answer is a page asking the member to confirm'}),
})

export const signOutForm = z.object({
  csrf_token: param(256),
  everywhere: param(8).openapi({
    description: 'yes: end every sign-in session of the member and void the device cookies of every browser they signed in from, not only this one',
  }),
  return_to: param(8192).openapi({
    description:
      "Where to go once signed out: only this service's authorize page as a relative address (/oauth/authorize?…), which the consent page's Sign out sends so the member can sign in again; any other value is refused. Without it: /oauth/authorized_applications",
  }),
})

export const tokenForm = z
  .object({
    grant_type: param(64).openapi({example: 'authorization_code'}),
    code: param(256),
    redirect_uri: param(),
    client_id: param(128).openapi({description: 'The client id (client_secret_post), or only to repeat the one in the Basic header'}),
    client_secret: param(256).openapi({description: 'The client secret (client_secret_post); never with an Authorization header, never in the query string'}),
    client_assertion_type: param(128).openapi({description: 'private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer'}),
    client_assertion: param(8192).openapi({description: "private_key_jwt: a JWT signed with one of the client's registered keys (RFC 7523 §2.2), used once"}),
    code_verifier: param(256),
    refresh_token: param(512).openapi({description: 'refresh_token grant: the refresh token last issued (each is used once)'}),
    scope: param(256),
    resource: param(2048).openapi({description: 'RFC 8707: the absolute URI of the resource server the token is for (the aud of a JWT access token)'}),
  })
  .openapi('TokenRequest')

/** A pushed authorization request: the authorize parameters, and the client's credentials. */
export const parForm = authorizeQuery
  .extend({
    client_secret: param(256).openapi({description: 'The client secret (client_secret_post); never with an Authorization header'}),
    client_assertion_type: param(128).openapi({description: 'private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer'}),
    client_assertion: param(8192).openapi({description: "private_key_jwt: a JWT signed with one of the client's registered keys, used once"}),
  })
  .openapi('PushedAuthorizationRequest')

export const parResponse = z
  .object({
    request_uri: z.string().openapi({example: 'urn:ietf:params:oauth:request_uri:6esc_11ACC5bwc014ltc14eY22c'}),
    expires_in: z.number().int().openapi({description: 'Seconds within which the browser must open the authorize page with it', example: 60}),
  })
  .openapi('PushedAuthorizationResponse')

export const revokeForm = z
  .object({
    // As long as the body may be: revocation answers any token it does not know, whatever its length.
    token: param(config.http.requestBodyLimitBytes).openapi({
      description: 'The access or refresh token to revoke (a refresh token ends its whole authorization); an empty or unknown value, of any length, is answered the same',
    }),
    token_type_hint: param(64).openapi({description: 'Advisory only (RFC 7009): any value is accepted, and the token is looked up as both kinds'}),
    client_id: param(128).openapi({description: 'The client id (client_secret_post), or only to repeat the one in the Basic header'}),
    client_secret: param(256).openapi({description: 'The client secret (client_secret_post); never with an Authorization header, never in the query string'}),
    client_assertion_type: param(128).openapi({description: 'private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer'}),
    client_assertion: param(8192).openapi({description: "private_key_jwt: a JWT signed with one of the client's registered keys (RFC 7523 §2.2), used once"}),
  })
  .openapi('RevocationRequest')

export const revocationResponse = z.object({}).strict().openapi('RevocationResponse', {description: 'Always the empty object'})

export const introspectForm = z
  .object({
    token: param(MAX_ACCESS_TOKEN_CHARS).openapi({description: 'The access or refresh token to describe'}),
    token_type_hint: param(64).openapi({
      description: 'access_token or refresh_token: which kind to look up first; the other is looked up too, so the answer does not depend on it',
    }),
    client_id: param(128).openapi({description: 'The client id (client_secret_post), or only to repeat the one in the Basic header'}),
    client_secret: param(256).openapi({description: 'The client secret (client_secret_post); never with an Authorization header, never in the query string'}),
    client_assertion_type: param(128).openapi({description: 'private_key_jwt: urn:ietf:params:oauth:client-assertion-type:jwt-bearer'}),
    client_assertion: param(8192).openapi({description: "private_key_jwt: a JWT signed with one of the client's registered keys (RFC 7523 §2.2), used once"}),
  })
  .openapi('IntrospectionRequest')

export const introspectionResponse = z
  .object({
    active: z.boolean(),
    scope: z.string().optional(),
    client_id: z.string().optional(),
    token_type: z.enum(['bearer', 'DPoP', 'refresh_token']).optional().openapi({description: 'bearer or DPoP for an access token; refresh_token for a refresh token'}),
    cnf: z.object({jkt: z.string()}).optional().openapi({description: 'A DPoP-bound token: the thumbprint of its key (RFC 9449 §6.2)'}),
    iat: z.number().int().optional(),
    exp: z.number().int().optional().openapi({description: 'Absent for a token that never expires'}),
    sub: z.string().optional().openapi({description: 'The member id, for a token that acts for a member'}),
  })
  .openapi('IntrospectionResponse', {description: 'For anything but a live token of the calling client: exactly {"active": false}'})

export const serverMetadata = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    revocation_endpoint: z.string(),
    introspection_endpoint: z.string(),
    userinfo_endpoint: z.string(),
    jwks_uri: z.string(),
    end_session_endpoint: z.string(),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    subject_types_supported: z.array(z.string()),
    id_token_signing_alg_values_supported: z.array(z.string()),
    claims_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean(),
    dpop_signing_alg_values_supported: z.array(z.string()),
    backchannel_logout_supported: z.boolean(),
    backchannel_logout_session_supported: z.boolean(),
    service_documentation: z.string(),
  })
  .passthrough()
  .openapi('AuthorizationServerMetadata', {description: 'RFC 8414 metadata, which is also the OpenID Provider configuration'})

export const tokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.enum(['bearer', 'DPoP']).openapi({description: 'DPoP for a token bound to the key of the DPoP proof sent with the request (RFC 9449)'}),
    expires_in: z
      .number()
      .int()
      .nullable()
      .optional()
      .openapi({description: 'Seconds until expiry; null means no expiry. Absent on an OpenID request (scope openid) for a token that never expires'}),
    scope: z.string(),
    created_at: z.number().int(),
    id_token: z.string().optional().openapi({description: 'OpenID Connect: a signed JWT, only when the authorization request had the openid scope'}),
    refresh_token: z.string().optional().openapi({description: 'Only when the member allowed offline_access (an OpenID request); each one is used once'}),
  })
  .openapi('AccessTokenResponse')

export const tokenInfoResponse = z
  .object({
    resource_owner_id: z.number().int().nullable(),
    scopes: z.array(z.string()),
    expires_in_seconds: z.number().int().nullable(),
    application: z.object({uid: z.string()}),
    created_at: z.number().int(),
  })
  .openapi('TokenInfo')

export const memberInfoResponse = z
  .object({
    first_name: z.string(),
    last_name: z.string(),
    country_of_practice: z.string(),
    primary_specialty: z.string(),
  })
  .openapi('MemberInfo')

export const oauthError = z.object({error: z.string(), error_description: z.string()}).openapi('OAuthError')

export const jsonWebKeySet = z
  .object({keys: z.array(z.object({kty: z.string(), kid: z.string(), alg: z.string(), use: z.literal('sig')}).passthrough())})
  .openapi('JsonWebKeySet', {description: 'The public keys ID tokens are signed with (RFC 7517)'})

export const userInfoResponse = z
  .object({
    sub: z.string().openapi({description: 'The member id: the same for every client'}),
    name: z.string().optional(),
    given_name: z.string().optional(),
    family_name: z.string().optional(),
    country_of_practice: z.string().optional(),
    primary_specialty: z.string().optional(),
    email: z.string().optional(),
    email_verified: z.boolean().optional().openapi({description: 'Always false: medpanel does not confirm addresses'}),
  })
  .openapi('UserInfo', {description: "The claims the token's scopes allow: profile adds the names and the two community fields, email the e-mail"})

export const endSessionParams = z.object({
  id_token_hint: param(8192).openapi({description: 'An ID token this service issued to the client (it may have expired)'}),
  post_logout_redirect_uri: param().openapi({
    description:
      'Where to go afterwards: a post-logout URI registered for the client, one of its redirect URIs, or the root of one of their origins (https://app.example/); exactly',
  }),
  state: param(1024).openapi({description: 'Returned unchanged on that redirect', example: 'af0ifjsldkj'}),
  client_id: param(128).openapi({description: 'The client, when no id_token_hint names it', example: DEMO_CLIENT_ID}),
  csrf_token: param(256).openapi({description: "Set by medpanel's own confirmation form"}),
  confirm: param(8).openapi({description: "yes, from medpanel's own confirmation form"}),
})
