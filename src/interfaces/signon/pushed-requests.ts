import {signonConfig} from './config.js'
import {AppError} from '../../errors.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import type {Client} from '../../registry/tables.js'
import type {SignonDb as Db} from './tables.js'
import * as repo from './repository.js'

/**
 * Pushed authorization requests (RFC 9126). The client sends its authorization parameters to
 * /oauth/par over its authenticated back channel and gets a one-time request_uri; the browser then
 * carries only client_id and that request_uri, so nothing in the address bar can be read or
 * changed on the way. The parameters are checked when pushed, exactly as the authorize page checks
 * them, and again when the browser arrives.
 */

export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'

/**
 * The parameters of an authorization request: what may be pushed (the others are the client's
 * credentials), and what the sign-in and consent forms carry from page to page.
 */
export const PUSHABLE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'state',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'login_hint',
  'dpop_jkt',
  'resource',
] as const

export type PushedParams = Partial<Record<(typeof PUSHABLE)[number], string>>

/** Stores a pushed request of `client` (authenticated; its parameters already checked) and answers its request_uri. */
export async function storePushedRequest(db: Db, client: Client, params: PushedParams, now: Date): Promise<{request_uri: string; expires_in: number}> {
  const id = randomToken(32)
  const seconds = signonConfig.pushedRequestSeconds
  await repo.insertPushedRequest(
    db,
    {
      id_hash: sha256(id),
      client_id: client.id,
      params: JSON.stringify({...params, client_id: client.id}),
      expires_at: iso(new Date(now.getTime() + seconds * 1000)),
      created_at: iso(now),
    },
    iso(now),
  )
  return {request_uri: `${REQUEST_URI_PREFIX}${id}`, expires_in: seconds}
}

/** A pushed request as the authorize page resolves it. */
export interface ResolvedPushedRequest {
  request: PushedParams & {client_id: string; redirect_uri: string}
  /** Its key in the store, to spend it by. */
  idHash: string
}

const refused = (why: string) => new AppError('invalid_request', why)

/**
 * The authorization request a request_uri stands for. Only the request_uri and client_id of the
 * browser's request count (RFC 9126 §4): any other parameter beside them is ignored. Refused, on
 * the page (never a redirect: nothing proves where to), when it is not one this server issued to
 * this client, was never opened within its minute, or was already answered.
 */
export async function resolvePushedRequest(db: Db, clientId: string, requestUri: string, now: Date): Promise<ResolvedPushedRequest> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) throw refused('request_uri must be one this server gave for a pushed authorization request (PAR)')
  const idHash = sha256(requestUri.slice(REQUEST_URI_PREFIX.length))
  const row = await repo.findPushedRequest(db, idHash)
  if (!row || row.client_id !== clientId) throw refused('request_uri is not a pushed authorization request of this client')
  if (row.used_at !== null) throw refused('this authorization request was answered already: a request_uri is used once')
  const stamp = iso(now)
  if (row.opened_at === null) {
    if (stamp > row.expires_at) throw refused('this pushed authorization request expired before it was opened: the application must start again')
    await repo.markPushedRequest(db, idHash, {opened_at: stamp})
  } else if (now.getTime() > Date.parse(row.opened_at) + signonConfig.pushedRequestPageSeconds * 1000) {
    throw refused('this authorization request has expired: the application must start again')
  }
  const params = JSON.parse(row.params) as PushedParams
  // Signed in for it already: what asked for a fresh sign-in (prompt=login, max_age) is met.
  const request = row.signed_in_at === null ? params : {...params, prompt: withoutLogin(params.prompt), max_age: undefined}
  return {request: {...request, client_id: row.client_id, redirect_uri: params.redirect_uri ?? ''}, idHash}
}

function withoutLogin(prompt: string | undefined): string | undefined {
  const kept = (prompt ?? '').split(' ').filter((value) => value !== '' && value !== 'login' && value !== 'select_account')
  return kept.length > 0 ? kept.join(' ') : undefined
}

/** The member signed in for this pushed request. */
export async function noteSignInFor(db: Db, idHash: string, now: Date): Promise<void> {
  await repo.markPushedRequest(db, idHash, {signed_in_at: iso(now)})
}

/** Spends a pushed request as its answer goes back to the client; refused when another answer went first. */
export async function spendPushedRequest(db: Db, idHash: string, now: Date): Promise<void> {
  if (!(await repo.spendPushedRequest(db, idHash, iso(now)))) throw refused('this authorization request was answered already: a request_uri is used once')
}
