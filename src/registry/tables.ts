import type {ColumnType, Generated, Insertable, Kysely, Selectable, Updateable} from 'kysely'
import type {GrantTables} from '../grants/tables.js'
import type {JsonColumn, JsonText} from '../store/json.js'
import type {Grant} from '../grants/names.js'

/** A registered partner company. Lists (redirect URIs, grants) are JSON arrays in text columns. */
export interface ClientTable {
  id: string
  secret_hash: string
  name: string
  url: string
  logo_url: string
  redirect_uris: JsonColumn<string[]>
  grants: JsonColumn<Grant[]>
  admin: number
  /** Agreed access-token lifetime in seconds; null means tokens never expire. */
  token_ttl: number | null
  expired_at: string | null
  partner_url: string | null
  partner_username: string | null
  /** Sent to the partner as HTTP Basic, so it is kept as given (it is the partner's credential). */
  partner_password: string | null
  signing_secret: string | null
  /** OpenID Connect: where RP-initiated logout may send the browser afterwards, exactly as registered. */
  post_logout_redirect_uris: ColumnType<JsonText<string[]>, JsonText<string[]> | undefined, JsonText<string[]>>
  /** OpenID Connect: the algorithm this client's ID tokens are signed with (RS256 or ES256). */
  id_token_alg: ColumnType<string, string | undefined, string>
  /**
   * How the client proves itself at the token endpoint (RFC 7591): client_secret_basic (also
   * accepts client_secret_post), client_secret_post, or none for a public client, whose
   * secret_hash is empty and matches no secret.
   */
  token_endpoint_auth_method: ColumnType<string, string | undefined, string>
  /** private_key_jwt: the client's public keys, a JWK Set as JSON text (or null, see jwks_uri). */
  jwks: ColumnType<string | null, string | null | undefined, string | null>
  /** private_key_jwt: where the client publishes its JWK Set, fetched and cached (or null, see jwks). */
  jwks_uri: ColumnType<string | null, string | null | undefined, string | null>
  /** 1: the client gets codes only for authorization requests it pushed (RFC 9126 §6). */
  require_pushed_authorization_requests: ColumnType<number, number | undefined, number>
  /** 1: every token the client gets is bound to a DPoP key; it gets no bearer token (RFC 9449 §5.2). */
  dpop_bound_access_tokens: ColumnType<number, number | undefined, number>
  /** OpenID Connect Back-Channel Logout: where the client is told, by a logout token, that a sign-in session ended. */
  backchannel_logout_uri: ColumnType<string | null, string | null | undefined, string | null>
  /** 1: the client asked for `sid` in its logout tokens (medpanel always sends it; kept as registered). */
  backchannel_logout_session_required: ColumnType<number, number | undefined, number>
  /** `opaque` (looked up by the service) or `jwt` (RFC 9068, checked by a resource server against the JWKS). */
  access_token_format: ColumnType<string, string | undefined, string>
  created_at: string
  updated_at: string
}

export interface MemberTable {
  id: Generated<number>
  email: string
  password_hash: string
  first_name: string
  last_name: string
  country: string
  specialty: string
  npi: string | null
  me: string | null
  active: number
  /** Sign-in sessions older than this are void. */
  password_changed_at: string
  /** Consent-page sessions started before this are void (deactivation, password change). */
  sessions_ended_at: ColumnType<string | null, string | null | undefined, string | null>
  created_at: string
  updated_at: string
}

/** Process-wide secrets and switches that must survive restarts (e.g. the cookie signing key). */
export interface SettingTable {
  key: string
  value: string
}

/** Failed authentications of one subject (`member:…`, `client:…`, `key:…`, `address:…`). */
export interface AuthFailureTable {
  subject: string
  failures: number
  locked_until: string | null
  last_failure_at: string
}

/** An initial access token (RFC 7591 §3): its digest, and the limits the operator gave it (null: none). */
export interface RegistrationTokenTable {
  token_hash: string
  expires_at: string | null
  uses_left: number | null
  created_at: string
}

/** A dynamically registered client's registration access token (RFC 7592), as a digest. */
export interface ClientRegistrationTable {
  client_id: string
  access_token_hash: string
  created_at: string
}

export interface RegistryTables {
  registration_tokens: RegistrationTokenTable
  client_registrations: ClientRegistrationTable
  clients: ClientTable
  members: MemberTable
  settings: SettingTable
  auth_failures: AuthFailureTable
}

export type ClientRow = Selectable<ClientTable>
/** A client as the service works with it: its lists decoded (registry/repository.ts, clientFromRow). */
export type Client = Omit<ClientRow, 'redirect_uris' | 'grants' | 'post_logout_redirect_uris'> & {
  redirect_uris: string[]
  grants: Grant[]
  post_logout_redirect_uris: string[]
}
export type NewClientRow = Insertable<ClientTable>
export type ClientUpdate = Updateable<ClientTable>
export type MemberRow = Selectable<MemberTable>
export type NewMemberRow = Insertable<MemberTable>
export type MemberUpdate = Updateable<MemberTable>

/** What this layer's queries see: the registry's tables and grants' below them. */
export type RegistryView = RegistryTables & GrantTables
export type RegistryDb = Kysely<RegistryView>
