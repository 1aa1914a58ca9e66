import {z} from 'zod'
import {useOpenApi} from '../../lib/zod.js'

useOpenApi()

/** One query or form value: a repeated parameter arrives as an array and fails here. */
const param = (max = 2048) => z.string({error: 'must be given once'}).max(max, `must be at most ${max} characters`).optional()

export const authorizeQuery = z.object({
  client_id: param(128).openapi({description: 'The client id issued at registration'}),
  redirect_uri: param().openapi({description: 'One of the client\'s registered redirect URIs, exactly'}),
  response_type: param(32).openapi({example: 'code'}),
  state: param(1024).openapi({description: 'Opaque value returned unchanged on the redirect'}),
  scope: param(256).openapi({example: 'profile'}),
  code_challenge: param(128).openapi({description: 'PKCE S256 challenge (RFC 7636)'}),
  code_challenge_method: param(16).openapi({example: 'S256'}),
})

export const consentForm = authorizeQuery.extend({
  csrf_token: param(256),
  decision: param(16).openapi({description: 'allow or deny'}),
})

export const signInForm = authorizeQuery.extend({
  csrf_token: param(256),
  email: param(254),
  password: param(1024),
})

export const tokenForm = z
  .object({
    grant_type: param(64).openapi({example: 'authorization_code'}),
    code: param(256),
    redirect_uri: param(),
    client_id: param(128),
    client_secret: param(256),
    code_verifier: param(256),
    scope: param(256),
  })
  .openapi('TokenRequest')

export const tokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int().nullable().openapi({description: 'Seconds until expiry; null means no expiry'}),
    scope: z.string(),
    created_at: z.number().int(),
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

export const oauthError = z
  .object({error: z.string(), error_description: z.string()})
  .openapi('OAuthError')
