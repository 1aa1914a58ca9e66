import {z} from 'zod'
import {narrow} from '../../store/database.js'
import type {StoreParts} from '../../store/database.js'
import {conversationsConfig} from './config.js'
import {AppError, badRequest, notFound} from '../../errors.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {newUuid, randomToken} from '../../lib/ids.js'
import {parseInput} from '../../lib/validate.js'
import {getClientRow, hasGrant} from '../../registry/service.js'
import {countWrongGuess, type GuessAttempt, tooManyAttempts} from '../../registry/throttle.js'
import type {ConversationsDb as Db, ConversationsView} from './tables.js'
import type {Page, PageAsk} from '../../lib/page.js'
import {countByClient, type ClientHolding} from '../../store/client-holding.js'
import {fromJsonText, toJsonText} from '../../store/json.js'
import {writeTransaction} from '../../store/transactions.js'
import {versionCache} from '../../store/version-cache.js'
import type {Client} from '../../registry/tables.js'
import * as repo from './repository.js'
import {apiKeyPatchSchema, METHODS, newApiKeySchema, type ApiKeyPatch, type Method, type NewApiKeyInput} from './schema.js'
import type {ApiKeyRow} from './tables.js'
import {isoSeconds} from './views.js'

// API keys of interface E: what operators issue, list, change and revoke, and the check of a presented key.

export interface ApiKeyView {
  id: string
  client_id: string
  methods: Method[]
  data_call_allowance: number
  data_calls_remaining: number
  renew_days: number | null
  /** When the allowance is next restored in full; null when it never renews. */
  renews_at: string | null
  subscription_ends_at: string | null
  revoked: boolean
  created_at: string
  updated_at: string
}

const DAY_MS = 86_400_000

/** The allowance period `now` falls in, and the calls already used in it. */
export function currentPeriod(row: ApiKeyRow, now: Date): {started: Date; used: number; renewsAt: Date | null} {
  const started = new Date(row.period_started_at)
  if (row.renew_days === null) return {started, used: row.data_calls_used, renewsAt: null}
  const length = row.renew_days * DAY_MS
  const elapsed = Math.floor((now.getTime() - started.getTime()) / length)
  if (elapsed <= 0) return {started, used: row.data_calls_used, renewsAt: new Date(started.getTime() + length)}
  const current = new Date(started.getTime() + elapsed * length)
  return {started: current, used: 0, renewsAt: new Date(current.getTime() + length)}
}

/** Made once: building a zod schema costs more than checking a value with it, and every call checks a key. */
const STORED_METHODS = z.array(z.enum(METHODS))

/** A key's methods, as stored. */
function methodsOf(row: ApiKeyRow): Method[] {
  return fromJsonText(row.methods, STORED_METHODS, `the methods of API key ${row.id}`)
}

export function apiKeyView(row: ApiKeyRow, now: Date): ApiKeyView {
  const period = currentPeriod(row, now)
  return {
    id: row.id,
    client_id: row.client_id,
    methods: methodsOf(row),
    data_call_allowance: row.data_call_allowance,
    data_calls_remaining: Math.max(0, row.data_call_allowance - period.used),
    renew_days: row.renew_days,
    renews_at: period.renewsAt ? iso(period.renewsAt) : null,
    subscription_ends_at: row.subscription_ends_at,
    revoked: row.revoked_at !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/** Issues a key to a client holding the conversations grant. The key is returned only here. */
export async function issueApiKey(db: Db, input: NewApiKeyInput, now: Date, fixedKey?: string): Promise<ApiKeyView & {api_key: string}> {
  const parsed = parseInput(newApiKeySchema, input)
  const client = await getClientRow(narrow(db), parsed.client_id)
  if (!hasGrant(client, 'conversations')) throw badRequest(`client "${client.id}" does not hold the conversations grant (update-client ${client.id} --grant …,conversations)`)
  const apiKey = fixedKey ?? `mpk_${randomToken(32)}`
  const stamp = iso(now)
  const row = {
    id: `key_${newUuid().replace(/-/g, '').slice(0, 20)}`,
    key_hash: sha256(apiKey),
    client_id: client.id,
    methods: toJsonText(METHODS.filter((m) => parsed.methods.includes(m))),
    data_call_allowance: parsed.data_calls,
    data_calls_used: 0,
    renew_days: parsed.renew_days,
    period_started_at: stamp,
    subscription_ends_at: parsed.subscription_ends,
    revoked_at: null,
    created_at: stamp,
    updated_at: stamp,
  }
  await repo.insertApiKey(db, row)
  return {api_key: apiKey, ...apiKeyView(row, now)}
}

/** Finds a key by its id (key_…) or by the key itself. */
export async function findApiKeyRow(db: Db, keyOrId: string): Promise<ApiKeyRow> {
  const row = /^key_[0-9a-f]{20}$/.test(keyOrId) ? await repo.findApiKey(db, keyOrId) : await repo.findApiKeyByHash(db, sha256(keyOrId))
  if (!row) throw notFound('no API key matches that key or id')
  return row
}

/** An API key as operators list it: never the key itself (the store keeps only its hash). */
export interface ApiKeyListItem extends ApiKeyView {
  data_calls_used: number
  period_started_at: string
  status: 'active' | 'revoked' | 'lapsed'
}

function apiKeyListItem(row: ApiKeyRow, now: Date): ApiKeyListItem {
  const period = currentPeriod(row, now)
  const lapsed = row.subscription_ends_at !== null && now.getTime() >= new Date(row.subscription_ends_at).getTime()
  return {
    ...apiKeyView(row, now),
    data_calls_used: period.used,
    period_started_at: iso(period.started),
    status: row.revoked_at !== null ? 'revoked' : lapsed ? 'lapsed' : 'active',
  }
}

/** The keys page by page, of one client (which must exist) or of all (list-api-keys, show-client). */
export async function pageApiKeys(db: Db, ask: PageAsk & {clientId?: string}, now: Date): Promise<Page<ApiKeyListItem>> {
  if (ask.clientId !== undefined) await getClientRow(narrow(db), ask.clientId)
  const page = await repo.pageApiKeyRows(db, ask)
  return {rows: page.rows.map((row) => apiKeyListItem(row, now)), total: page.total}
}

/** One API key as list-api-keys shows it, by its id or by the key itself. */
export async function showApiKey(db: Db, keyOrId: string, now: Date): Promise<ApiKeyListItem> {
  return apiKeyListItem(await findApiKeyRow(db, keyOrId), now)
}

/** Revokes one key; says whether it already was, so a second run changes nothing and says so. */
export async function revokeApiKey(db: Db, keyOrId: string, now: Date): Promise<{id: string; client_id: string; revoked_at: string; already_revoked: boolean}> {
  return writeTransaction(db, async (trx) => {
    const row = await findApiKeyRow(trx, keyOrId)
    if (row.revoked_at !== null) return {id: row.id, client_id: row.client_id, revoked_at: row.revoked_at, already_revoked: true}
    const stamp = iso(now)
    await repo.updateApiKeyRow(trx, row.id, {revoked_at: stamp, updated_at: stamp})
    return {id: row.id, client_id: row.client_id, revoked_at: stamp, already_revoked: false}
  })
}

/** A client's API keys (with their call log), as remove-client counts and releases them. */
export const apiKeyHolding: ClientHolding<ConversationsView, 'api_keys'> = {
  count: async (db, clientId) => ({api_keys: await countByClient(db, 'conversation_api_keys', clientId)}),
  release: (trx, clientId) => repo.deleteClientApiKeys(trx, clientId),
}

/**
 * Changes a key's settings. Setting `data_calls` starts a fresh allowance of that many calls,
 * beginning now.
 */
export async function updateApiKey(db: Db, keyOrId: string, input: ApiKeyPatch, now: Date): Promise<ApiKeyView> {
  const patch = parseInput(apiKeyPatchSchema, input)
  return writeTransaction(db, async (trx) => {
    const row = await findApiKeyRow(trx, keyOrId)
    const stamp = iso(now)
    const change: Parameters<typeof repo.updateApiKeyRow>[2] = {updated_at: stamp}
    if (patch.methods) change.methods = toJsonText(METHODS.filter((m) => patch.methods!.includes(m)))
    if (patch.data_calls !== undefined) {
      change.data_call_allowance = patch.data_calls
      change.data_calls_used = 0
      change.period_started_at = stamp
    }
    if (patch.renew_days !== undefined) change.renew_days = patch.renew_days
    if (patch.subscription_ends !== undefined) change.subscription_ends_at = patch.subscription_ends
    if (patch.revoke !== undefined) change.revoked_at = patch.revoke ? (row.revoked_at ?? stamp) : null
    await repo.updateApiKeyRow(trx, row.id, change)
    return apiKeyView((await repo.findApiKey(trx, row.id))!, now)
  })
}

/**
 * Checks a presented key for one method: 401, 402 and 403 as the spec's error table names them.
 * Read-only; a data call's allowance is spent later, in the call's own write transaction. A right
 * key is always accepted; a wrong one counts against the caller's address (registry/throttle.ts),
 * whose further wrong keys, past the allowance, are answered 429 instead of 401.
 */
export async function authenticateKey({db, reader}: StoreParts<Db>, presented: string, method: Method, attempt: GuessAttempt): Promise<ApiKeyRow> {
  try {
    return await checkKey(reader, presented, method, attempt.now)
  } catch (error) {
    if (error instanceof AppError && error.code === 'unauthorized') {
      const wait = await countWrongGuess(narrow(db), 'api-key', attempt)
      if (wait > 0) throw tooManyAttempts(wait)
    }
    throw error
  }
}

/** The refusals of a key row, in the order a caller would fix them. */
export function refuseKey(row: ApiKeyRow, method: Method, now: Date): void {
  if (row.revoked_at !== null) throw new AppError('unauthorized', 'the API key has been revoked', {details: `Revoked at ${row.revoked_at}.`})
  if (row.subscription_ends_at !== null && now.getTime() >= new Date(row.subscription_ends_at).getTime()) {
    throw new AppError('payment_required', 'the subscription has lapsed', {details: `The subscription of this API key ended at ${isoSeconds(row.subscription_ends_at)}.`})
  }
  const methods = methodsOf(row)
  if (!methods.includes(method)) {
    throw new AppError('forbidden', `this API key may not call ${method}`, {details: `Allowed methods for this key: ${methods.join(', ')}.`})
  }
}

/**
 * The clients of presented keys as last read, while the store is unchanged (store/version-cache.ts):
 * every call of E checks its key's client. The key row itself is read on every call: it carries
 * the calls spent, which change with every data call.
 */
const recentKeyClient = versionCache<string, Client>(conversationsConfig.caches.apiKeyClients)

async function checkKey(db: Db, presented: string, method: Method, now: Date): Promise<ApiKeyRow> {
  // Keys carry 256 random bits, so looking up their SHA-256 leaks nothing a timing attack could use.
  const row = await repo.findApiKeyByHash(db, sha256(presented))
  if (!row) throw new AppError('unauthorized', 'the API key is not valid', {details: 'Check the X-Service-Conversation-API-Key header.'})
  if (row.revoked_at !== null) refuseKey(row, method, now)
  const client = await recentKeyClient(db, row.client_id, () => getClientRow(narrow(db), row.client_id))
  if (client.expired_at !== null) throw new AppError('unauthorized', "the API key's client account has expired", {details: `Expired at ${client.expired_at}.`})
  if (!hasGrant(client, 'conversations'))
    throw new AppError('forbidden', "the API key's client may not use the conversation interface", {details: 'The client no longer holds the conversations grant.'})
  refuseKey(row, method, now)
  return row
}
