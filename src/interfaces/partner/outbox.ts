import {AppError, notFound} from '../../errors.js'
import {narrow} from '../../store/database.js'
import {isDotSegment} from './schema.js'
import {iso} from '../../lib/clock.js'
import {newUuid} from '../../lib/ids.js'
import {getClientRow, hasGrant} from '../../registry/service.js'
import {clientFromRow, findClient} from '../../registry/repository.js'
import type {PartnerDb as Db} from './tables.js'
import {writeTransaction} from '../../store/transactions.js'
import * as repo from './repository.js'
import type {DeliveryRow, DeliveryStatus, NewDeliveryRow, ResourceKind} from './tables.js'
import {partnerConfig} from './config.js'
import {retryDelay} from '../../lib/retry-schedule.js'

/**
 * The outbox: every change to a pushed resource writes its delivery rows here inside the same
 * transaction as the change, so a change is never stored without its push, nor pushed without
 * being stored. The worker (worker.ts) drains it.
 */

/** Waits after the 1st, 2nd, … failed attempt; then every 6 hours until 3 days have passed. */
export const RETRY_SCHEDULE_SECONDS = partnerConfig.retryScheduleSeconds
export const RETRY_EVERY_SECONDS = partnerConfig.retryEverySeconds
export const GIVE_UP_AFTER_SECONDS = partnerConfig.giveUpAfterSeconds

/** The delay before the next attempt after `attempts` failed ones, or null when it is time to give up. */
export function nextAttemptDelay(attempts: number, firstAttemptAt: Date, now: Date): number | null {
  return retryDelay(partnerConfig, attempts, firstAttemptAt, now)
}

/**
 * One id as one path segment. Validation refuses dot segments before anything is queued; this
 * refuses them again so no caller can build a path that escapes its resource.
 */
export function encodeId(value: string): string {
  if (isDotSegment(value)) throw new AppError('bad_request', `"${value}" cannot be used as an id in a partner path`)
  return encodeURIComponent(value)
}

export const paths = {
  project: (p: string) => `/v1/projects/${encodeId(p)}`,
  quota: (p: string, q: string) => `/v1/projects/${encodeId(p)}/quotas/${encodeId(q)}`,
  members: (p: string, q: string) => `/v1/projects/${encodeId(p)}/quotas/${encodeId(q)}/members`,
  // The spec spells the single-member path with a singular "quota" segment; partners expect that.
  member: (p: string, q: string, npi: string) => `/v1/projects/${encodeId(p)}/quota/${encodeId(q)}/members/${encodeId(npi)}`,
  events: (p: string) => `/v1/projects/${encodeId(p)}/events`,
}

export interface Push {
  kind: ResourceKind
  method: 'PUT' | 'POST' | 'DELETE'
  path: string
  quotaId: string | null
  body: string | null
}

/**
 * True when `later` needs the resource of `earlier` to exist at the partner first: everything in
 * a project needs the project; a quota's members and every event need the quota; a single member
 * needs its list.
 */
function needs(later: Pick<Push, 'kind' | 'quotaId'>, earlier: Pick<Push, 'kind' | 'quotaId'>): boolean {
  if (earlier.kind === 'project') return later.kind !== 'project'
  if (earlier.kind === 'quota') return later.kind === 'event' || ((later.kind === 'members' || later.kind === 'member') && later.quotaId === earlier.quotaId)
  if (earlier.kind === 'members') return later.kind === 'member' && later.quotaId === earlier.quotaId
  return false
}

/**
 * Drops queued requests that a new PUT of the same resource makes pointless. Walks back from the
 * newest pending row of the partner's project: rows for the same resource (its PUTs, and for a
 * member list the POST chunks that followed its PUT) are dropped; the walk stops at the first row
 * that needs the resource to exist (dropping the older PUT would send that row too early) or that
 * is being sent right now.
 */
async function supersede(db: Db, clientId: string, projectId: string, push: Push, now: Date): Promise<void> {
  const pending = await repo.pendingOfProject(db, clientId, projectId)
  const drop: number[] = []
  const stamp = iso(now)
  for (let i = pending.length - 1; i >= 0; i--) {
    const row = pending[i]!
    if (row.lease_until !== null && row.lease_until >= stamp) break
    const rowPush = {kind: row.kind, quotaId: row.quota_id}
    if (row.path === push.path && (row.method === 'PUT' || (push.kind === 'members' && row.method === 'POST'))) {
      drop.push(row.seq)
      continue
    }
    if (needs(rowPush, push)) break
  }
  await repo.setStatus(db, drop, 'superseded', stamp)
}

/** The partner clients that receive a project: given ones, else every current partner client. */
export async function resolvePartners(db: Db, requested: string[] | undefined): Promise<string[]> {
  if (requested?.length) {
    for (const clientId of requested) {
      const row = await getClientRow(narrow(db), clientId)
      if (!hasGrant(row, 'partner') || !row.partner_url) throw new AppError('bad_request', `partner: client "${clientId}" has no partner grant and URL`)
    }
    return [...new Set(requested)]
  }
  const clients = (await db.selectFrom('clients').selectAll().orderBy('created_at').execute()).map(clientFromRow)
  return clients.filter((c) => hasGrant(c, 'partner') && c.partner_url && c.expired_at === null).map((c) => c.id)
}

/**
 * Queues `pushes`, in order, for every partner of the project. Call inside the change's
 * transaction. `requestId` is the id of the CLI run or HTTP request making the change: each
 * delivery carries it to the partner as X-Request-Id.
 */
export async function enqueue(db: Db, projectId: string, partnerIds: string[], pushes: Push[], now: Date, requestId?: string): Promise<string[]> {
  const stamp = iso(now)
  const ids: string[] = []
  for (const clientId of partnerIds) {
    // An expired partner still gets its rows: the worker marks them failed, list-deliveries shows
    // why, and retry-deliveries sends them once the client is reinstated.
    if (!(await findClient(narrow(db), clientId))) continue
    let batch: (NewDeliveryRow & {body: string | null})[] = []
    for (const push of pushes) {
      if (push.method === 'PUT' && push.kind !== 'member') {
        await repo.insertDeliveries(db, batch)
        batch = []
        await supersede(db, clientId, projectId, push, now)
      }
      const id = newUuid()
      ids.push(id)
      batch.push({
        id,
        client_id: clientId,
        project_id: projectId,
        quota_id: push.quotaId,
        kind: push.kind,
        method: push.method,
        path: push.path,
        body: push.body,
        status: 'pending',
        attempts: 0,
        next_attempt_at: stamp,
        first_attempt_at: null,
        last_error: null,
        last_status: null,
        lease_owner: null,
        lease_until: null,
        created_at: stamp,
        delivered_at: null,
        updated_at: stamp,
        request_id: requestId ?? null,
      })
    }
    await repo.insertDeliveries(db, batch)
  }
  return ids
}

/** What operators see of a delivery. */
export interface DeliveryView {
  id: string
  client_id: string
  project_id: string
  method: string
  path: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: string | null
  last_status: number | null
  last_error: string | null
  created_at: string
  delivered_at: string | null
  /** The CLI run or HTTP request that queued it (X-Request-Id); null for rows of earlier releases. */
  request_id: string | null
}

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    client_id: row.client_id,
    project_id: row.project_id,
    method: row.method,
    path: row.path,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    request_id: row.request_id,
  }
}

// Listing and retrying deliveries: what operators do with the outbox (list-deliveries, retry-deliveries).

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'superseded'] as const satisfies readonly DeliveryStatus[]

export async function listDeliveries(db: Db, filter: {status?: DeliveryStatus; projectId?: string; ids?: string[]; limit?: number}): Promise<DeliveryView[]> {
  return (await repo.listDeliveries(db, filter)).map(deliveryView)
}

export interface RetryResult {
  requeued: string[]
  /** Failed PUTs (and member chunks) that a later PUT of the same resource replaced: not resent. */
  superseded: string[]
}

/**
 * Puts failed deliveries back in the queue, due now, with a fresh retry budget. A failed PUT that
 * a later PUT of the same resource replaced is marked superseded instead: sending it now would
 * roll the partner back to an older state.
 */
export async function retryDeliveries(db: Db, selection: {ids?: string[]; allFailed?: boolean}, now: Date): Promise<RetryResult> {
  if (!selection.allFailed && !selection.ids?.length) throw new AppError('bad_request', 'give --id ID (repeatable) or --failed')
  return writeTransaction(db, async (trx) => {
    const rows = selection.allFailed ? await repo.listDeliveries(trx, {status: 'failed'}) : await repo.listDeliveries(trx, {ids: selection.ids})
    if (selection.ids) {
      for (const wanted of selection.ids) {
        const row = rows.find((r) => r.id === wanted)
        if (!row) throw notFound(`id: no delivery "${wanted}"`)
        if (row.status !== 'failed') throw new AppError('conflict', `id: delivery "${wanted}" is ${row.status}, not failed`)
      }
    }
    const stamp = iso(now)
    const result: RetryResult = {requeued: [], superseded: []}
    for (const row of rows) {
      if (row.status !== 'failed') continue
      if ((row.method === 'PUT' || (row.method === 'POST' && row.kind === 'members')) && (await repo.hasLaterPut(trx, row))) {
        await repo.updateDelivery(trx, row.seq, {status: 'superseded', updated_at: stamp})
        result.superseded.push(row.id)
        continue
      }
      await repo.updateDelivery(trx, row.seq, {
        status: 'pending',
        attempts: 0,
        first_attempt_at: null,
        next_attempt_at: stamp,
        lease_owner: null,
        lease_until: null,
        updated_at: stamp,
      })
      result.requeued.push(row.id)
    }
    return result
  })
}
