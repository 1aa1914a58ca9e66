import {AppError, notFound} from '../errors.js'
import {isValidNpi} from '../lib/npi.js'
import type {RegistryDb as Db} from './tables.js'
import type {Grant} from '../grants/names.js'
import * as repo from './repository.js'
import type {Client, MemberRow} from './tables.js'

/*
 * Reading clients and members as operators and callers see them. Kept apart from service.ts (which
 * validates input with zod) so that the commands that only read (list-clients, show-member, …)
 * start without loading zod.
 */

/** What operators and callers may see of a client: everything but secrets. */
export interface ClientView {
  client_id: string
  name: string
  url: string
  logo_url: string
  redirect_uris: string[]
  /** OpenID Connect: where a logout the client started may send the browser back to. */
  post_logout_redirect_uris: string[]
  grants: Grant[]
  /** OpenID Connect: the algorithm the client's ID tokens are signed with (RS256 or ES256). */
  id_token_alg: string
  /** How the client authenticates at the token endpoint; none: a public client, with no secret. */
  token_endpoint_auth_method: string
  /** private_key_jwt clients only: the kids of their registered JWK Set (empty with a jwks_uri). */
  jwks_key_ids?: string[]
  /** private_key_jwt clients only: where they publish their keys, or null with a registered set. */
  jwks_uri?: string | null
  /** The client gets codes only for authorization requests it pushed first (RFC 9126, PAR). */
  require_pushed_authorization_requests: boolean
  /** Every token the client gets is bound to a DPoP key (RFC 9449); it gets no bearer token. */
  dpop_bound_access_tokens: boolean
  /** OpenID Connect Back-Channel Logout: where logout tokens are posted, or null. */
  backchannel_logout_uri: string | null
  /** The client asked for `sid` in its logout tokens (they always carry it). */
  backchannel_logout_session_required: boolean
  /** opaque, or jwt: RFC 9068 access tokens signed with the ID-token keys. */
  access_token_format: string
  admin: boolean
  token_ttl: number | null
  expired: boolean
  expired_at: string | null
  partner_url: string | null
  partner_username: string | null
  signs_deliveries: boolean
  created_at: string
  updated_at: string
}

export function clientView(row: Client): ClientView {
  return {
    client_id: row.id,
    name: row.name,
    url: row.url,
    logo_url: row.logo_url,
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    grants: row.grants,
    id_token_alg: row.id_token_alg,
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    ...(row.token_endpoint_auth_method === 'private_key_jwt' ? {jwks_key_ids: keyIds(row.jwks), jwks_uri: row.jwks_uri} : {}),
    require_pushed_authorization_requests: row.require_pushed_authorization_requests === 1,
    dpop_bound_access_tokens: row.dpop_bound_access_tokens === 1,
    backchannel_logout_uri: row.backchannel_logout_uri,
    backchannel_logout_session_required: row.backchannel_logout_session_required === 1,
    access_token_format: row.access_token_format,
    admin: row.admin === 1,
    token_ttl: row.token_ttl,
    expired: row.expired_at !== null,
    expired_at: row.expired_at,
    partner_url: row.partner_url === null ? null : withoutCredentials(row.partner_url),
    partner_username: row.partner_username,
    signs_deliveries: row.signing_secret !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/** The kids of a stored JWK Set (JSON text), `(no kid)` for a key without one. */
export function keyIds(jwksText: string | null): string[] {
  if (jwksText === null) return []
  try {
    const set = JSON.parse(jwksText) as {keys?: {kid?: string}[]}
    return (set.keys ?? []).map((key) => key.kid ?? '(no kid)')
  } catch {
    return []
  }
}

export async function getClientRow(db: Db, id: string): Promise<Client> {
  const row = await repo.findClient(db, id)
  if (!row) throw notFound(`no client with id "${id}"`)
  return row
}

export async function getClient(db: Db, id: string): Promise<ClientView> {
  return clientView(await getClientRow(db, id))
}

export async function listClients(db: Db): Promise<ClientView[]> {
  return (await repo.listClients(db)).map(clientView)
}

export interface MemberView {
  user_id: number
  email: string
  first_name: string
  last_name: string
  country_of_practice: string
  primary_specialty: string
  npi: string | null
  me: string | null
  active: boolean
  created_at: string
  updated_at: string
}

export function memberView(row: MemberRow): MemberView {
  return {
    user_id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    country_of_practice: row.country,
    primary_specialty: row.specialty,
    npi: row.npi,
    me: row.me,
    active: row.active === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/** Parses an operator-typed member id ("42"); anything else is a clear error. */
export function parseMemberId(value: string | number): number {
  const id = typeof value === 'number' ? value : /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN
  if (!Number.isSafeInteger(id) || id <= 0) throw new AppError('bad_request', `member id must be a positive integer, got "${value}"`)
  return id
}

/** A member by e-mail (any case) or NPI, as the operator names one; not found is one line saying by what. */
export async function getMemberBy(db: Db, key: 'email' | 'npi', value: string): Promise<MemberView> {
  const row = key === 'email' ? await repo.findMemberByEmail(db, value) : await repo.findMemberBy(db, 'npi', value.trim())
  if (!row) throw notFound(`no member with ${key === 'email' ? 'e-mail' : 'NPI'} ${JSON.stringify(value.slice(0, 254))}`)
  return memberView(row)
}

/** A member as named in one word (see parseMemberName). */
export type MemberName = {by: 'email'; email: string} | {by: 'npi'; npi: string} | {by: 'user_id'; id: number}

/**
 * A member named in one word, as `show-member ID` takes it: an e-mail (it holds an @), an NPI (ten
 * digits ending in a valid check digit), or a user_id (other digits). Anything else is one clear
 * error saying what may be given, before any store is opened.
 */
export function parseMemberName(given: string): MemberName {
  const value = given.trim()
  if (value.includes('@')) return {by: 'email', email: value}
  if (isValidNpi(value)) return {by: 'npi', npi: value}
  if (/^\d+$/.test(value)) return {by: 'user_id', id: parseMemberId(value)}
  const shown = given.length > 60 ? `${given.slice(0, 60)}…` : given
  throw new AppError('bad_request', `"${shown}" names no member: give a user_id (digits), an e-mail (name@domain) or an NPI (10 digits)`)
}

/**
 * The member a parsed name names. An NPI's digits could also be a user_id: that user_id is tried
 * only when no member has the NPI, so either kind of member can be named.
 */
export async function getMemberNamed(db: Db, name: MemberName): Promise<MemberView> {
  if (name.by === 'email') return getMemberBy(db, 'email', name.email)
  if (name.by === 'user_id') return getMember(db, name.id)
  const row = (await repo.findMemberBy(db, 'npi', name.npi)) ?? (await repo.findMember(db, Number(name.npi)))
  if (!row) throw notFound(`no member with NPI ${name.npi} (nor with that user_id)`)
  return memberView(row)
}

export async function getMemberRow(db: Db, id: number): Promise<MemberRow> {
  const row = await repo.findMember(db, id)
  if (!row) throw notFound(`no member with user_id ${id}`)
  return row
}

export async function getMember(db: Db, id: number): Promise<MemberView> {
  return memberView(await getMemberRow(db, id))
}

export async function listMembers(db: Db): Promise<MemberView[]> {
  return (await repo.listMemberRows(db)).map(memberView)
}

/**
 * A partner URL as shown: credentials in it (`https://user:pw@host`, refused since 0.3.0 but
 * possibly stored by an earlier release) are masked, never printed.
 */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.username === '' && parsed.password === '') return url
    parsed.username = '***'
    parsed.password = ''
    return parsed.toString()
  } catch {
    return url
  }
}
