import {AppError, type ErrorCode} from '../errors.js'
import {iso} from '../lib/clock.js'
import {sha256, matchesDigest} from '../lib/hashing.js'
import {randomToken} from '../lib/ids.js'
import type {StoreParts} from '../store/database.js'
import {writeTransaction} from '../store/transactions.js'
import type {RegistryDb as Db} from './tables.js'
import type {ClientPatch, Grant, NewClientInput} from './schema.js'
import {registerClient, updateClient, getClient, type ClientView} from './service.js'

/**
 * Dynamic client registration (RFC 7591) and its management protocol (RFC 7592), on top of the
 * registry's own registration: the metadata is translated to register-client's input and held to
 * the same rules. Registration is open only while an initial access token an operator issued is
 * live; every token is kept as a SHA-256 digest.
 */

export interface IssuedRegistrationToken {
  initial_access_token: string
  expires_at: string | null
  uses: number | null
}

/** Issues an initial access token (RFC 7591 §3), shown once. */
export async function issueRegistrationToken(db: Db, options: {expiresInSeconds?: number; uses?: number}, now: Date): Promise<IssuedRegistrationToken> {
  for (const [flag, value] of [
    ['expires-in', options.expiresInSeconds],
    ['uses', options.uses],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value <= 0)) throw new AppError('bad_request', `${flag}: must be a positive whole number`)
  }
  const token = randomToken(32)
  const expiresAt = options.expiresInSeconds === undefined ? null : iso(new Date(now.getTime() + options.expiresInSeconds * 1000))
  await db
    .insertInto('registration_tokens')
    .values({token_hash: sha256(token), expires_at: expiresAt, uses_left: options.uses ?? null, created_at: iso(now)})
    .execute()
  return {initial_access_token: token, expires_at: expiresAt, uses: options.uses ?? null}
}

/** Whether registration is open: some initial access token has not expired and has uses left. */
export async function registrationEnabled(db: Db, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('registration_tokens')
    .select('token_hash')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', iso(now))]))
    .where((eb) => eb.or([eb('uses_left', 'is', null), eb('uses_left', '>', 0)]))
    .executeTakeFirst()
  return row !== undefined
}

/** RFC 7591 §2 client metadata, as far as medpanel's clients can hold it. */
export interface ClientMetadata {
  redirect_uris?: unknown
  client_name?: unknown
  client_uri?: unknown
  logo_uri?: unknown
  grant_types?: unknown
  response_types?: unknown
  token_endpoint_auth_method?: unknown
  jwks?: unknown
  jwks_uri?: unknown
  post_logout_redirect_uris?: unknown
  backchannel_logout_uri?: unknown
  backchannel_logout_session_required?: unknown
  id_token_signed_response_alg?: unknown
  [other: string]: unknown
}

/** The OAuth grant types a registered client may ask for, and the medpanel grant each gives. */
const GRANT_TYPES: Record<string, Grant | undefined> = {authorization_code: 'signon', refresh_token: undefined, client_credentials: 'pulses'}

const REQUIRED: readonly [string, string][] = [
  ['client_name', 'name'],
  ['client_uri', 'url'],
  ['logo_uri', 'logo_url'],
]

function metadataError(message: string): AppError {
  return new AppError('invalid_client_metadata', message)
}

/** The fields medpanel requires of every client, and the grants the grant types ask for. */
function translate(metadata: unknown): NewClientInput {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw metadataError('the body must be a JSON object of client metadata')
  const m = metadata as ClientMetadata
  const missing = REQUIRED.filter(([field]) => m[field] === undefined || m[field] === null || m[field] === '').map(([field]) => field)
  if (missing.length > 0) throw metadataError(`${missing.join(', ')}: required (medpanel shows the client's name, site and logo on its consent page)`)
  const grantTypes = m.grant_types ?? ['authorization_code']
  if (!Array.isArray(grantTypes) || grantTypes.length === 0 || !grantTypes.every((g) => typeof g === 'string'))
    throw metadataError('grant_types: must be a non-empty array of strings')
  const unknown = grantTypes.filter((g) => !(g in GRANT_TYPES))
  if (unknown.length > 0) throw metadataError(`grant_types: ${unknown.join(', ')} not supported (authorization_code, refresh_token, client_credentials)`)
  const grants = [...new Set(grantTypes.map((g) => GRANT_TYPES[g]).filter((g): g is Grant => g !== undefined))]
  if (grants.length === 0) throw metadataError('grant_types: refresh_token needs authorization_code')
  const responseTypes = m.response_types ?? (grants.includes('signon') ? ['code'] : [])
  if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code')) throw metadataError('response_types: only code is supported')
  if (responseTypes.length > 0 && !grants.includes('signon')) throw metadataError('response_types: code needs the authorization_code grant type')
  const input: Record<string, unknown> = {
    name: m.client_name,
    url: m.client_uri,
    logo_url: m.logo_uri,
    grants,
    redirect_uris: m.redirect_uris ?? [],
  }
  for (const [from, to] of [
    ['token_endpoint_auth_method', 'token_endpoint_auth_method'],
    ['post_logout_redirect_uris', 'post_logout_redirect_uris'],
    ['jwks', 'jwks'],
    ['jwks_uri', 'jwks_uri'],
    ['backchannel_logout_uri', 'backchannel_logout_uri'],
    ['backchannel_logout_session_required', 'backchannel_logout_session_required'],
    ['id_token_signed_response_alg', 'id_token_alg'],
  ] as const) {
    if (m[from] !== undefined) input[to] = m[from]
  }
  return input as NewClientInput
}

/** The registry's refusal in RFC 7591's terms: a redirect URI problem, or any other metadata problem. */
async function asRegistrationError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof AppError && (error.code === 'bad_request' || error.code === 'conflict')) {
      const code: ErrorCode = /^(post_logout_)?redirect_uris\b/.test(error.message) ? 'invalid_redirect_uri' : 'invalid_client_metadata'
      throw new AppError(
        code,
        error.message
          .replace(/^name:/, 'client_name:')
          .replace(/^url:/, 'client_uri:')
          .replace(/^logo_url:/, 'logo_uri:'),
      )
    }
    throw error
  }
}

/** A registered client's metadata in RFC 7591's names, as stored. */
export function registrationResponse(view: ClientView, registrationClientUri: string, createdAt: Date) {
  const grantTypes = [...(view.grants.includes('signon') ? ['authorization_code', 'refresh_token'] : []), ...(view.grants.includes('pulses') ? ['client_credentials'] : [])]
  return {
    client_id: view.client_id,
    client_id_issued_at: Math.floor(createdAt.getTime() / 1000),
    client_name: view.name,
    client_uri: view.url,
    logo_uri: view.logo_url,
    redirect_uris: view.redirect_uris,
    post_logout_redirect_uris: view.post_logout_redirect_uris,
    grant_types: grantTypes,
    response_types: view.grants.includes('signon') ? ['code'] : [],
    token_endpoint_auth_method: view.token_endpoint_auth_method,
    id_token_signed_response_alg: view.id_token_alg,
    ...(view.jwks_uri ? {jwks_uri: view.jwks_uri} : {}),
    ...(view.backchannel_logout_uri ? {backchannel_logout_uri: view.backchannel_logout_uri, backchannel_logout_session_required: view.backchannel_logout_session_required} : {}),
    registration_client_uri: registrationClientUri,
  }
}

/**
 * Registers a client for the holder of an initial access token: the token is checked and, when it
 * has a number of uses, one is spent in the same transaction as the registration.
 */
export async function registerDynamicClient(
  store: StoreParts<Db>,
  initialToken: string | undefined,
  metadata: unknown,
  now: Date,
): Promise<{view: ClientView; client_secret?: string; registration_access_token: string}> {
  const {db} = store
  const input = translate(metadata)
  return writeTransaction(db, async (trx) => {
    const digest = sha256(initialToken ?? '')
    const token = initialToken === undefined ? undefined : await trx.selectFrom('registration_tokens').selectAll().where('token_hash', '=', digest).executeTakeFirst()
    const live = token !== undefined && (token.expires_at === null || token.expires_at > iso(now)) && (token.uses_left === null || token.uses_left > 0)
    if (!live) throw invalidToken('the initial access token is missing, unknown, expired or used up')
    const registered = await asRegistrationError(() => registerClient({...store, db: trx}, input, now))
    if (token.uses_left !== null)
      await trx
        .updateTable('registration_tokens')
        .set({uses_left: token.uses_left - 1})
        .where('token_hash', '=', digest)
        .execute()
    const accessToken = randomToken(32)
    await trx
      .insertInto('client_registrations')
      .values({client_id: registered.client_id, access_token_hash: sha256(accessToken), created_at: iso(now)})
      .execute()
    const {client_secret, ...view} = registered as ClientView & {client_secret?: string}
    return {view, ...(client_secret === undefined ? {} : {client_secret}), registration_access_token: accessToken}
  })
}

function invalidToken(message: string): AppError {
  return new AppError('invalid_token', message, {challenge: {scheme: 'Bearer', error: 'invalid_token'}})
}

/** The client a registration access token manages (RFC 7592 §3): 401 invalid_token unless it is that client's. */
export async function registeredClient(db: Db, clientId: string, accessToken: string | undefined): Promise<{view: ClientView; createdAt: Date}> {
  const row = await db.selectFrom('client_registrations').selectAll().where('client_id', '=', clientId).executeTakeFirst()
  if (row === undefined || accessToken === undefined || !matchesDigest(accessToken, row.access_token_hash)) {
    throw invalidToken("the registration access token is missing or not this client's")
  }
  const view = await getClient(db, clientId)
  if (view.expired) throw invalidToken('this client was deleted')
  return {view, createdAt: new Date(row.created_at)}
}

/** Replaces a registered client's metadata (RFC 7592 §2.2), held to the rules of registration. */
export async function replaceDynamicClient(store: StoreParts<Db>, clientId: string, accessToken: string | undefined, metadata: unknown, now: Date) {
  const current = await registeredClient(store.db, clientId, accessToken)
  if (typeof metadata === 'object' && metadata !== null && 'client_id' in metadata && (metadata as {client_id: unknown}).client_id !== clientId) {
    throw metadataError("client_id: must be this client's")
  }
  const input = translate(metadata)
  const method = input.token_endpoint_auth_method ?? 'client_secret_basic'
  if (method !== current.view.token_endpoint_auth_method)
    throw metadataError(`token_endpoint_auth_method: cannot change (${current.view.token_endpoint_auth_method}); register a new client`)
  const patch: ClientPatch = {
    name: input.name,
    url: input.url,
    logo_url: input.logo_url,
    grants: input.grants,
    redirect_uris: input.redirect_uris,
    post_logout_redirect_uris: input.post_logout_redirect_uris ?? [],
    backchannel_logout_uri: input.backchannel_logout_uri ?? null,
    backchannel_logout_session_required: input.backchannel_logout_session_required ?? false,
    ...(input.id_token_alg === undefined ? {} : {id_token_alg: input.id_token_alg}),
    ...(input.jwks ? {jwks: input.jwks} : {}),
    ...(input.jwks_uri ? {jwks_uri: input.jwks_uri} : {}),
  }
  if (patch.redirect_uris?.length === 0) delete patch.redirect_uris
  const {revoked_tokens: _, ...view} = await asRegistrationError(() => updateClient(store, clientId, patch, now))
  return {view, createdAt: current.createdAt}
}

/**
 * Deletes a registered client (RFC 7592 §2.3): it is expired at once, which kills every token it
 * holds, and its registration access token is forgotten. The row stays, as with update-client
 * --expire, until an operator removes it with remove-client.
 */
export async function deleteDynamicClient(store: StoreParts<Db>, clientId: string, accessToken: string | undefined, now: Date): Promise<void> {
  await registeredClient(store.db, clientId, accessToken)
  await updateClient(store, clientId, {expire: true}, now)
  await store.db.deleteFrom('client_registrations').where('client_id', '=', clientId).execute()
}
