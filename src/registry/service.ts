import {AppError} from '../errors.js'
import {narrow} from '../store/database.js'
import {config} from '../config.js'
import {iso} from '../lib/clock.js'
import {hashPassword, matchesDigest, sha256} from '../lib/hashing.js'
import {newClientId, randomToken} from '../lib/ids.js'
import {parseInput} from '../lib/validate.js'
import type {StoreParts} from '../store/database.js'
import {seal} from '../store/secrets.js'
import {writeTransaction} from '../store/transactions.js'
import {versionCache} from '../store/version-cache.js'
import {toJsonText} from '../store/json.js'
import {countWrongGuess, type GuessAttempt, tooManyAttempts} from './throttle.js'
import type {Metrics} from '../metrics/metrics.js'
import type {RegistryView as Database, RegistryDb as Db} from './tables.js'
import type {Kysely} from 'kysely'
import {forgetConsent, revokeTokens, supersedeCodes, supersedeMemberCodes} from '../grants/repository.js'
import * as repo from './repository.js'
import {
  clientPatchSchema,
  memberPatchSchema,
  newClientSchema,
  newMemberSchema,
  publicClientRules,
  type ClientPatch,
  type Grant,
  type MemberPatch,
  type NewClientInput,
  type NewMemberInput,
} from './schema.js'
import type {Client} from './tables.js'
import {importJWK, type JWK} from 'jose'
import type {ClientJwks} from './client-keys.js'
import {clientView, getClientRow, getMember, getMemberRow, type ClientView, type MemberView} from './views.js'

export {clientView, getClient, getClientRow, getMember, getMemberRow, listClients, listMembers, memberView, parseMemberId, type ClientView, type MemberView} from './views.js'

/** Whether clients of this authentication method are given a secret: all but public and private_key_jwt ones. */
function holdsSecret(method: string): boolean {
  return method !== 'none' && method !== 'private_key_jwt'
}

/** Each registered key must be one a client could sign with: a malformed modulus is refused now, not at its first use. */
async function checkKeysImport(set: ClientJwks): Promise<void> {
  for (const [i, key] of set.keys.entries()) {
    try {
      await importJWK(key as JWK, key.alg ?? (key.kty === 'EC' ? 'ES256' : 'RS256'))
    } catch (error) {
      throw new AppError('bad_request', `jwks: key ${key.kid ?? i + 1} cannot be used: ${(error as Error).message}`)
    }
  }
}

/** Whether a client (its grants decoded once, when it was read) holds a grant. */
export function hasGrant(client: Pick<Client, 'grants'>, grant: Grant): boolean {
  return client.grants.includes(grant)
}

export interface RegisteredClient extends ClientView {
  /** Shown once, at registration or rotation; only its hash is kept. */
  client_secret: string
}

/**
 * A client without a secret (token_endpoint_auth_method none, a public client, or private_key_jwt,
 * which proves itself with its keys) is registered without one: its view alone comes back.
 */
export async function registerClient(store: StoreParts<Db>, input: NewClientInput & {token_endpoint_auth_method: 'none' | 'private_key_jwt'}, now: Date): Promise<ClientView>
export async function registerClient(store: StoreParts<Db>, input: NewClientInput, now: Date, fixed?: {id: string; secret: string}): Promise<RegisteredClient>
export async function registerClient({db, keys}: StoreParts<Db>, input: NewClientInput, now: Date, fixed?: {id: string; secret: string}): Promise<RegisteredClient | ClientView> {
  const client = parseInput(newClientSchema, input)
  const id = fixed?.id ?? client.client_id ?? newClientId()
  if (client.client_id !== undefined && (await repo.findClient(db, client.client_id))) {
    throw new AppError('conflict', `client_id: "${client.client_id}" is already registered`)
  }
  if (client.jwks !== null) await checkKeysImport(client.jwks)
  // A client without a secret gets an empty hash, which no presented secret matches.
  const secret = holdsSecret(client.token_endpoint_auth_method) ? (fixed?.secret ?? randomToken(32)) : undefined
  const stamp = iso(now)
  await repo.insertClient(db, {
    id,
    secret_hash: secret === undefined ? '' : sha256(secret),
    name: client.name,
    url: client.url,
    logo_url: client.logo_url,
    redirect_uris: toJsonText(client.redirect_uris),
    post_logout_redirect_uris: toJsonText(client.post_logout_redirect_uris),
    id_token_alg: client.id_token_alg,
    token_endpoint_auth_method: client.token_endpoint_auth_method,
    jwks: client.jwks === null ? null : JSON.stringify(client.jwks),
    jwks_uri: client.jwks_uri,
    require_pushed_authorization_requests: client.require_pushed_authorization_requests ? 1 : 0,
    dpop_bound_access_tokens: client.dpop_bound_access_tokens ? 1 : 0,
    backchannel_logout_uri: client.backchannel_logout_uri,
    backchannel_logout_session_required: client.backchannel_logout_session_required ? 1 : 0,
    access_token_format: client.access_token_format,
    grants: toJsonText([...new Set(client.grants)]),
    admin: client.admin ? 1 : 0,
    token_ttl: client.token_ttl,
    expired_at: null,
    partner_url: client.partner_url?.replace(/\/+$/, '') ?? null,
    partner_username: client.partner_username,
    // Sent to the partner later, so kept reversible, but sealed: the database alone does not open them.
    partner_password: client.partner_password === null ? null : seal(keys, client.partner_password),
    signing_secret: client.signing_secret === null ? null : seal(keys, client.signing_secret),
    created_at: stamp,
    updated_at: stamp,
  })
  const view = clientView(await getClientRow(db, id))
  return secret === undefined ? view : {...view, client_secret: secret}
}

/**
 * Applies an operator's change. Expiring a client, or altering its agreed token lifetime, kills
 * every token it holds (the spec's token-life table), in the same transaction as the change.
 */
export async function updateClient({db, keys}: StoreParts<Kysely<Database>>, id: string, input: ClientPatch, now: Date): Promise<ClientView & {revoked_tokens: number}> {
  const patch = parseInput(clientPatchSchema, input)
  return writeTransaction(db, async (trx) => {
    const row = await getClientRow(trx, id)
    const stamp = iso(now)
    const grants = patch.grants ? [...new Set(patch.grants)] : row.grants
    const redirectUris = patch.redirect_uris ?? row.redirect_uris
    if (grants.includes('signon') && redirectUris.length === 0) {
      throw new AppError('bad_request', 'redirect_uris: a signon client needs at least one redirect URI')
    }
    if (patch.jwks !== undefined && patch.jwks_uri !== undefined) throw new AppError('bad_request', 'jwks: give a JWK Set or a jwks_uri, not both')
    if (patch.jwks !== undefined) await checkKeysImport(patch.jwks)
    // New keys, one way or the other, replace the old ones whole.
    const jwks = patch.jwks !== undefined ? JSON.stringify(patch.jwks) : patch.jwks_uri !== undefined ? null : row.jwks
    const jwksUri = patch.jwks_uri !== undefined ? patch.jwks_uri : patch.jwks !== undefined ? null : row.jwks_uri
    parseInput(publicClientRules, {method: row.token_endpoint_auth_method, grants, redirect_uris: redirectUris, has_jwks: jwks !== null, has_jwks_uri: jwksUri !== null})
    const next = {
      jwks,
      jwks_uri: jwksUri,
      require_pushed_authorization_requests:
        patch.require_pushed_authorization_requests === undefined ? row.require_pushed_authorization_requests : patch.require_pushed_authorization_requests ? 1 : 0,
      dpop_bound_access_tokens: patch.dpop_bound_access_tokens === undefined ? row.dpop_bound_access_tokens : patch.dpop_bound_access_tokens ? 1 : 0,
      backchannel_logout_uri: patch.backchannel_logout_uri === undefined ? row.backchannel_logout_uri : patch.backchannel_logout_uri,
      backchannel_logout_session_required:
        patch.backchannel_logout_session_required === undefined ? row.backchannel_logout_session_required : patch.backchannel_logout_session_required ? 1 : 0,
      access_token_format: patch.access_token_format ?? row.access_token_format,
      name: patch.name ?? row.name,
      url: patch.url ?? row.url,
      logo_url: patch.logo_url ?? row.logo_url,
      redirect_uris: toJsonText(redirectUris),
      post_logout_redirect_uris: toJsonText(patch.post_logout_redirect_uris ?? row.post_logout_redirect_uris),
      id_token_alg: patch.id_token_alg ?? row.id_token_alg,
      grants: toJsonText(grants),
      admin: patch.admin === undefined ? row.admin : patch.admin ? 1 : 0,
      token_ttl: patch.token_ttl === undefined ? row.token_ttl : patch.token_ttl,
      expired_at: patch.expire === undefined ? row.expired_at : patch.expire ? (row.expired_at ?? stamp) : null,
      partner_url: patch.partner_url === undefined ? row.partner_url : (patch.partner_url?.replace(/\/+$/, '') ?? null),
      partner_username: patch.partner_username === undefined ? row.partner_username : patch.partner_username,
      partner_password: patch.partner_password === undefined ? row.partner_password : patch.partner_password === null ? null : seal(keys, patch.partner_password),
      signing_secret: patch.signing_secret === undefined ? row.signing_secret : patch.signing_secret === null ? null : seal(keys, patch.signing_secret),
      updated_at: stamp,
    }
    if (grants.includes('partner')) {
      for (const field of ['partner_url', 'partner_username', 'partner_password'] as const) {
        if (!next[field]) throw new AppError('bad_request', `${field}: is required for a partner client`)
      }
    }
    await repo.updateClientRow(trx, id, next)
    const ttlChanged = patch.token_ttl !== undefined && patch.token_ttl !== row.token_ttl
    const expiredNow = patch.expire === true && row.expired_at === null
    const revoked = ttlChanged || expiredNow ? await revokeTokens(narrow(trx), {clientId: id}, stamp) : 0
    return {...clientView(await getClientRow(trx, id)), revoked_tokens: revoked}
  })
}

export async function rotateClientSecret(db: Db, id: string, now: Date): Promise<{client_id: string; client_secret: string}> {
  const client = await getClientRow(db, id)
  if (client.token_endpoint_auth_method === 'none') throw new AppError('bad_request', `client ${id} is a public client: it has no secret to rotate`)
  if (client.token_endpoint_auth_method === 'private_key_jwt') {
    throw new AppError(
      'bad_request',
      `client ${id} authenticates with its keys (private_key_jwt): it has no secret to rotate; give it new keys with update-client --jwks-file or --jwks-uri`,
    )
  }
  const secret = randomToken(32)
  await repo.updateClientRow(db, id, {secret_hash: sha256(secret), updated_at: iso(now)})
  return {client_id: id, client_secret: secret}
}

/** What an unknown client's secret is checked against: the same work as a known one's, and no known input hashes to it. */
const NO_CLIENT_DIGEST = '0'.repeat(64)

/** Client secrets that matched lately, each to its SHA-256 digest (config.caches.clientSecrets says why). */
const matchedSecrets = new Map<string, string>()

/** Clients as last read, while the store is unchanged (store/version-cache.ts): every call of C, D and E reads its client. */
const recentClient = versionCache<string, Client | undefined>(config.caches.clients, (row) => row !== undefined)

/**
 * The client when id and secret match (compared in constant time), otherwise undefined. A right
 * secret is always accepted. With an `attempt` (every HTTP caller gives one) a wrong one counts
 * against the caller's address (registry/throttle.ts), and past its allowance is thrown as 429
 * instead of answered undefined.
 */
export async function authenticateClient({db, reader}: StoreParts<Db>, id: string, secret: string, attempt?: GuessAttempt): Promise<Client | undefined> {
  const row = await recentClient(reader, id, () => repo.findClient(reader, id))
  // The digest is remembered only for a secret that matched, and is compared with the client's
  // current one, so a rotated secret is refused at once.
  if (row !== undefined && matchedSecrets.get(secret) === row.secret_hash) return row
  // Hash even when the client is unknown so the timing does not tell which ids exist.
  const matched = matchesDigest(secret, row?.secret_hash ?? NO_CLIENT_DIGEST)
  if (row !== undefined && matched) {
    if (matchedSecrets.size >= config.caches.clientSecrets) matchedSecrets.clear()
    matchedSecrets.set(secret, row.secret_hash)
    return row
  }
  if (attempt) {
    const wait = await countWrongGuess(db, 'client-secret', attempt)
    if (wait > 0) throw tooManyAttempts(wait)
  }
  return undefined
}

/**
 * Adds a member. The password is hashed first, outside the write transaction, so the store's write
 * lock is never held while scrypt runs (a fraction of a second at the default cost); the checks
 * for a taken e-mail, NPI or ME number and the insert then run together.
 */
export async function addMember(db: Db, input: NewMemberInput, now: Date): Promise<MemberView> {
  const member = parseInput(newMemberSchema, input)
  const passwordHash = await hashPassword(member.password)
  return writeTransaction(db, async (trx) => {
    for (const [column, value] of [
      ['email', member.email],
      ['npi', member.npi],
      ['me', member.me],
    ] as const) {
      if (value !== null && (await repo.findMemberBy(trx, column, value))) {
        throw new AppError('conflict', `${column}: a member with ${column} ${value} already exists`)
      }
    }
    const stamp = iso(now)
    const id = await repo.insertMember(trx, {
      email: member.email,
      password_hash: passwordHash,
      first_name: member.first_name,
      last_name: member.last_name,
      country: member.country,
      specialty: member.specialty,
      npi: member.npi,
      me: member.me,
      active: 1,
      password_changed_at: stamp,
      created_at: stamp,
      updated_at: stamp,
    })
    return getMember(trx, id)
  })
}

/**
 * A password change or a deactivation kills every token the member holds and every code not yet
 * exchanged, in the same transaction. Reactivation does not bring either back.
 */
export async function updateMember(db: Kysely<Database>, id: number, input: MemberPatch, now: Date): Promise<MemberView & {revoked_tokens: number}> {
  const patch = parseInput(memberPatchSchema, input)
  const passwordHash = patch.password === undefined ? undefined : await hashPassword(patch.password)
  return writeTransaction(db, async (trx) => {
    const row = await getMemberRow(trx, id)
    const stamp = iso(now)
    let revoked = 0
    const change: Parameters<typeof repo.updateMemberRow>[2] = {updated_at: stamp}
    if (passwordHash !== undefined) {
      change.password_hash = passwordHash
      change.password_changed_at = stamp
    }
    if (patch.active !== undefined) change.active = patch.active ? 1 : 0
    // Every sign-in session ends with the password or the membership, not only tokens and codes.
    if (passwordHash !== undefined || (patch.active === false && row.active === 1)) change.sessions_ended_at = stamp
    await repo.updateMemberRow(trx, id, change)
    if (passwordHash !== undefined || (patch.active === false && row.active === 1)) {
      revoked = await revokeTokens(narrow(trx), {memberId: id}, stamp)
      // A code handed out before the change would otherwise still buy a fresh token.
      await supersedeMemberCodes(narrow(trx), id, stamp)
    }
    return {...(await getMember(trx, id)), revoked_tokens: revoked}
  })
}

/**
 * The member withdraws a client's access: its tokens die and its pending codes expire. The tokens
 * are counted in `metrics`, the serving app's registry, when the member did it on the applications
 * page (an operator's command has none).
 */
export async function revokeConsent(
  db: Kysely<Database>,
  memberId: number,
  clientId: string,
  now: Date,
  metrics?: Metrics,
): Promise<{user_id: number; client_id: string; revoked_tokens: number}> {
  return writeTransaction(db, async (trx) => {
    await getMemberRow(trx, memberId)
    await getClientRow(trx, clientId)
    const stamp = iso(now)
    await supersedeCodes(narrow(trx), memberId, clientId, stamp)
    // The remembered consent goes too: the next sign-in asks the member again.
    await forgetConsent(narrow(trx), memberId, clientId)
    const revoked = await revokeTokens(narrow(trx), {memberId, clientId}, stamp, metrics)
    return {user_id: memberId, client_id: clientId, revoked_tokens: revoked}
  })
}

/**
 * Signs the member out everywhere (the applications page's "sign out of every browser"): every
 * sign-in session and every device cookie given before now is void, as after a password change,
 * but the password, tokens and consents stay.
 */
export async function endMemberSessions(db: Db, memberId: number, now: Date): Promise<void> {
  await repo.updateMemberRow(db, memberId, {sessions_ended_at: iso(now)})
}
