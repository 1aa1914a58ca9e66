/**
 * The algorithms an operator may pick for a client's ID tokens (OpenID Connect), RS256 unless told
 * otherwise. The signon interface holds a signing key for each one (its ID_TOKEN_ALGS, the same
 * list, test/interfaces/signon/signing-keys.test.ts keeps them equal); the registry keeps its own
 * copy because a shared layer never imports an interface. Free of zod: read paths load it.
 */
export const CLIENT_ID_TOKEN_ALGS = ['RS256', 'ES256'] as const
export type ClientIdTokenAlg = (typeof CLIENT_ID_TOKEN_ALGS)[number]
export const DEFAULT_ID_TOKEN_ALG: ClientIdTokenAlg = 'RS256'
