import type {ColumnType, Selectable} from 'kysely'

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

/** The jti of a DPoP proof accepted (RFC 9449 §11.1), kept until the proof is too old to be presented. */
export interface DpopProofTable {
  jkt: string
  jti: string
  expires_at: string
}

/** What a member allowed a client, remembered so the consent page is not shown again for it. */
export interface ConsentTable {
  member_id: number
  client_id: string
  scopes: string
  created_at: string
  updated_at: string
}

export interface GrantTables {
  refresh_tokens: RefreshTokenTable
  consents: ConsentTable
  dpop_proofs: DpopProofTable
}

export type RefreshTokenRow = Selectable<RefreshTokenTable>
export type ConsentRow = Selectable<ConsentTable>
