import type {ColumnType, Kysely, Selectable} from 'kysely'
import type {GrantTables} from '../../grants/tables.js'
import type {RegistryTables} from '../../registry/tables.js'

/** A member's sign-in on the consent and applications pages (one per browser sign-in). */
export interface SigninSessionTable {
  /** SHA-256 of the session id the cookie carries; the id itself is never stored. */
  id_hash: string
  member_id: number
  created_at: string
  /** Moved to the moment of ending when the session is ended, so the sweep finds it by expiry. */
  expires_at: string
  /** Set at sign-out, or when a new sign-in in the same browser replaced this session. */
  ended_at: string | null
  /**
   * The session's public id in ID and logout tokens (back-channel logout): random, unrelated to
   * the cookie's id. Null for sessions begun before it existed.
   */
  sid: ColumnType<string | null, string | null | undefined, string | null>
}

/** A client that got an ID token in a sign-in session: told when the session ends. */
export interface IdTokenSessionTable {
  sid: string
  client_id: string
  member_id: number
  created_at: string
}

export type LogoutDeliveryStatus = 'pending' | 'delivered' | 'failed'

/** A logout token to post to a client's back-channel logout URI (the outbox the logout worker drains). */
export interface LogoutDeliveryTable {
  /** The logout token's jti: the same on every attempt, so the client can drop a duplicate. */
  id: string
  client_id: string
  /** The token's sub. */
  member_id: number
  /** The token's sid; empty (NO_SID) for a token naming the member alone (backchannel-logout.ts, logoutsOf). */
  sid: string
  status: LogoutDeliveryStatus
  attempts: ColumnType<number, number | undefined, number>
  next_attempt_at: string
  first_attempt_at: string | null
  last_status: number | null
  last_error: string | null
  /** Which worker is sending it, until when: no two processes send it at once. */
  lease_owner: string | null
  lease_until: string | null
  created_at: string
  updated_at: string
  delivered_at: string | null
}

/** An ID-token signing key (OpenID Connect); the private half sealed under the store's key. */
export interface SigningKeyTable {
  kid: string
  alg: string
  /** PKCS #8 PEM, sealed (store/secrets.ts). */
  private_key: string
  /** The public half as a JWK (JSON), as jwks_uri publishes it. */
  public_jwk: string
  created_at: string
  /** Set when a newer key replaced it; it signs nothing after. */
  retired_at: string | null
  /** A retired key is published until the last ID token it signed has expired. */
  publish_until: string | null
}

/** An authorization request a client pushed (RFC 9126), until it is spent or forgotten. */
export interface PushedRequestTable {
  /** SHA-256 of the random part of its request_uri. */
  id_hash: string
  client_id: string
  /** The authorization parameters as pushed, a JSON object of strings. */
  params: string
  /** It must be opened in the browser by then. */
  expires_at: string
  opened_at: string | null
  /** When the member signed in for it: a prompt=login or max_age it carries is then met. */
  signed_in_at: string | null
  /** When its answer went back to the client: it is never used again. */
  used_at: string | null
  created_at: string
}

export interface SignonTables {
  signin_sessions: SigninSessionTable
  signing_keys: SigningKeyTable
  pushed_requests: PushedRequestTable
  id_token_sessions: IdTokenSessionTable
  logout_deliveries: LogoutDeliveryTable
}

export type SigninSessionRow = Selectable<SigninSessionTable>
export type SigningKeyRow = Selectable<SigningKeyTable>
export type PushedRequestRow = Selectable<PushedRequestTable>
export type IdTokenSessionRow = Selectable<IdTokenSessionTable>
export type LogoutDeliveryRow = Selectable<LogoutDeliveryTable>

/** What this layer's queries see: sign-on's tables and those of the registry and grants below it. */
export type SignonView = SignonTables & RegistryTables & GrantTables
export type SignonDb = Kysely<SignonView>
