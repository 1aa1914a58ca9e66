import type {ColumnType, Generated, Kysely, Selectable} from 'kysely'
import type {JsonColumn} from '../store/json.js'
import type {Grant} from './names.js'

/*
 * Grants owns every table of what sign-on hands out: their Kysely types are here and their queries
 * in grants/repository.ts only. Two of them are older than this folder, and their shipped
 * migrations (never edited or moved) stay where they were released:
 * - access_tokens: created in registry/migrations/2026112201_registry_signon.ts, then altered in
 *   grants/migrations/2026112404_token_last_used.ts (last_used_at) and 2026120301_dpop.ts (dpop_jkt);
 * - authorization_codes: created in registry/migrations/2026112201_registry_signon.ts, then altered
 *   in interfaces/signon/migrations/2026112701_openid_connect.ts (nonce, auth_time),
 *   2026120312_backchannel_logout_sessions.ts (sid) and 2026120313_code_dpop_jkt.ts (dpop_jkt), and
 *   in grants/migrations/2026120402_code_resource.ts (resource);
 * refresh_tokens, consents and spent_jtis were made by grants' own migrations (the signon one of
 * 2026120312 adds refresh_tokens.sid). spent_jtis (2026120403_replay_store) took over the rows of
 * two tables it dropped: grants' dpop_proofs and sign-on's used_jtis.
 */

export interface AuthorizationCodeTable {
  /** SHA-256 of the code; the code itself is never stored. */
  code_hash: string
  client_id: string
  member_id: number
  redirect_uri: string
  scopes: string
  code_challenge: string | null
  /** OpenID Connect: the authorize request's nonce, echoed in the ID token. */
  nonce: ColumnType<string | null, string | null | undefined, string | null>
  /** OpenID Connect: when the member signed in (the session's start), the ID token's auth_time. */
  auth_time: ColumnType<string | null, string | null | undefined, string | null>
  /** OpenID Connect: the sign-in session's sid, for the ID token (back-channel logout). */
  sid: ColumnType<string | null, string | null | undefined, string | null>
  /** RFC 9449 §10: the thumbprint of the DPoP key the code was bound to in advance; only a proof of it exchanges the code. */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
  /** RFC 8707: the resource the authorization request named, the JWT access token's audience by default. */
  resource: ColumnType<string | null, string | null | undefined, string | null>
  expires_at: string
  /** Set when the code is exchanged; a second exchange finds it set and revokes what it issued. */
  used_at: string | null
  /** Set when a newer allow for the same member and client supersedes this code. */
  superseded_at: string | null
  created_at: string
}

export interface AccessTokenTable {
  id: Generated<number>
  token_hash: string
  client_id: string
  /** Null for client_credentials tokens, which act for the client itself. */
  member_id: number | null
  code_hash: string | null
  scopes: string
  expires_at: string | null
  revoked_at: string | null
  created_at: string
  /** Last presented, to the nearest ten minutes; null until first used. */
  last_used_at: ColumnType<string | null, string | null | undefined, string | null>
  /** The JWK thumbprint of the DPoP key it is bound to (RFC 9449 `cnf.jkt`); null: a bearer token. */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

/**
 * A refresh token (RFC 6749 §6), stored as its SHA-256 only. The tokens of one authorization
 * share a family: the hash of the code they came from, which the family's access tokens carry as
 * `code_hash`.
 */
export interface RefreshTokenTable {
  token_hash: string
  family: string
  client_id: string
  member_id: number
  /** What the authorization granted; a refresh may ask for less, never more. */
  scopes: string
  /** When the member signed in for the authorization (the ID tokens' auth_time). */
  auth_time: string | null
  /** The sign-in session the family began in (its ID tokens' sid); null before back-channel logout. */
  sid: ColumnType<string | null, string | null | undefined, string | null>
  created_at: string
  /** The idle end: unused this long, the token is dead (never past family_expires_at). */
  expires_at: string
  /** The absolute end of the whole family, however often it was refreshed. */
  family_expires_at: string
  /** Set when the token was exchanged for its successor; a second use ends the family. */
  used_at: string | null
  revoked_at: string | null
  /** A public client's family is bound to the DPoP key of its first proof (RFC 9449 §5): null: unbound. */
  dpop_jkt: ColumnType<string | null, string | null | undefined, string | null>
}

/**
 * The replay store: the jti of every signed proof accepted once (a DPoP proof, RFC 9449 §11.1; a
 * private_key_jwt client assertion, RFC 7523 §3), kept until the proof could no longer be accepted
 * anyway. The primary key is (expires_at, kind, issuer, jti): the sweep deletes its front, and a
 * second insert of the same proof finds its row (grants/replay.ts).
 */
export interface SpentJtiTable {
  /** When the proof stops being acceptable anyway, from its signed claims: the row may go then. */
  expires_at: string
  kind: SpentKind
  /** Who signed it: the JWK thumbprint of a DPoP proof's key, a client assertion's client id. */
  issuer: string
  jti: string
}

/** What a spent jti came with. */
export type SpentKind = 'dpop' | 'client_assertion'

/** What a member allowed a client, remembered so the consent page is not shown again for it. */
export interface ConsentTable {
  member_id: number
  client_id: string
  scopes: string
  created_at: string
  updated_at: string
}

export interface GrantTables {
  authorization_codes: AuthorizationCodeTable
  access_tokens: AccessTokenTable
  refresh_tokens: RefreshTokenTable
  consents: ConsentTable
  spent_jtis: SpentJtiTable
}

export type RefreshTokenRow = Selectable<RefreshTokenTable>
export type ConsentRow = Selectable<ConsentTable>
export type AuthorizationCodeRow = Selectable<AuthorizationCodeTable>
export type AccessTokenRow = Selectable<AccessTokenTable>

/**
 * What grants reads of the registry's tables, which it does not own: the token lookup brings a
 * token's client and member in the same statement (it runs on every authenticated request), and
 * the applications page lists a member's tokens with their clients. The
 * registry sits above grants, so grants names the columns it needs here, and the composition root
 * (src/schema.ts) checks that the registry's tables have them, with these types.
 */
export interface TokenOwnerTables {
  clients: {id: string; name: string; url: string; logo_url: string; expired_at: string | null; grants: JsonColumn<Grant[]>; admin: number}
  members: {id: Generated<number>; active: number; first_name: string; last_name: string; country: string; specialty: string; email: string}
}

/** The tables grants' queries see: its own, and the registry columns of TokenOwnerTables. */
export type GrantsView = GrantTables & TokenOwnerTables
export type GrantsDb = Kysely<GrantsView>
