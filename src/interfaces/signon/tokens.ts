import {iso} from '../../lib/clock.js'
import {narrow} from '../../store/database.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import * as grants from '../../grants/repository.js'
import type {Client} from '../../registry/tables.js'
import type {SignonDb as Db} from './tables.js'
import {type AccessTokenSigner, jwtAccessTokenSeconds, signAccessToken} from './jwt-access-tokens.js'

/** The token endpoint's answer (and issue-token's). */
export interface TokenResponse {
  access_token: string
  /** DPoP when the token is bound to the key of the request's DPoP proof (RFC 9449 §5). */
  token_type: 'bearer' | 'DPoP'
  /**
   * Null: never expires (the seed's wire format). Left out on an OpenID request for a token that
   * never expires: RFC 6749 §5.1 makes it optional, and strict libraries refuse null.
   */
  expires_in?: number | null
  scope: string
  created_at: number
  /** OpenID Connect: only for a code whose request had the openid scope. */
  id_token?: string
  /** Only with the offline_access scope (OpenID Connect Core §11); rotated at every refresh. */
  refresh_token?: string
}

export interface MintOptions {
  /** Overrides the client's agreed lifetime (null: never expires). */
  ttlSeconds?: number | null
  /** Binds the token to this DPoP key (its JWK thumbprint): it then works only with a proof signed by the key. */
  dpopJkt?: string | null
  /** For a client with JWT access tokens: the token handed out is a JWT this signs, living at most signonConfig.jwtAccessTokenMaxSeconds. */
  jwt?: AccessTokenSigner | undefined
  /** When the member signed in (ISO 8601): a JWT access token's auth_time. */
  authTime?: string | null
}

/**
 * Makes and stores an access token for the client (and the member, when it acts for one). It lives
 * the client's agreed lifetime unless `options.ttlSeconds` says otherwise.
 */
export async function mintToken(
  db: Db,
  client: Client,
  memberId: number | null,
  scopes: string,
  codeHash: string | null,
  now: Date,
  options: MintOptions = {},
): Promise<TokenResponse> {
  const agreed = options.ttlSeconds === undefined ? client.token_ttl : options.ttlSeconds
  const ttlSeconds = options.jwt === undefined ? agreed : jwtAccessTokenSeconds(agreed)
  const dpopJkt = options.dpopJkt ?? null
  // A JWT is stored by its digest, as an opaque token is: token info, revocation and expiry read it unchanged.
  const token =
    options.jwt === undefined
      ? randomToken(32)
      : await signAccessToken(options.jwt, {
          clientId: client.id,
          memberId,
          scope: scopes,
          jti: randomToken(16),
          ttlSeconds: jwtAccessTokenSeconds(agreed),
          authTime: options.authTime,
          dpopJkt,
          now,
        })
  const expiresAt = ttlSeconds === null ? null : iso(new Date(now.getTime() + ttlSeconds * 1000))
  await grants.insertToken(narrow(db), {
    token_hash: sha256(token),
    client_id: client.id,
    member_id: memberId,
    code_hash: codeHash,
    scopes,
    expires_at: expiresAt,
    created_at: iso(now),
    dpop_jkt: dpopJkt,
  })
  return {access_token: token, token_type: dpopJkt === null ? 'bearer' : 'DPoP', expires_in: ttlSeconds, scope: scopes, created_at: Math.floor(now.getTime() / 1000)}
}

/**
 * The answer to an OpenID request (scope openid): a token that never expires is told by leaving
 * expires_in out, which RFC 6749 §5.1 allows and every OpenID library accepts, where null fails
 * openid-client, oauth4webapi and Auth.js. A plain OAuth request keeps the seed's null.
 */
export function openidAnswer(response: TokenResponse): TokenResponse {
  if (response.expires_in !== null) return response
  const {expires_in: _never, ...rest} = response
  return rest
}
