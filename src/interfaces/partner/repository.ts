import {claimForUpdate} from '../../store/dialect.js'
import {sql, type SelectQueryBuilder} from 'kysely'
import type {PartnerView as Database, PartnerDb as Db} from './tables.js'
import type {PartnerDeliveryTable, DeliveryRow, DeliveryStatus, EventRow, NewDeliveryRow, ProjectRow, QuotaMemberRow, QuotaRow} from './tables.js'
import type {Page, PageAsk} from '../../lib/page.js'

/** The statuses of a delivery not yet made to its partner. */
export const UNDELIVERED = ['pending', 'failed'] as const satisfies readonly DeliveryStatus[]

export async function findProject(db: Db, projectId: string): Promise<ProjectRow | undefined> {
  return db.selectFrom('partner_projects').selectAll().where('project_id', '=', projectId).executeTakeFirst()
}

export async function saveProject(db: Db, row: ProjectRow): Promise<void> {
  await db
    .insertInto('partner_projects')
    .values(row)
    .onConflict((oc) => oc.column('project_id').doUpdateSet({status: row.status, body: row.body, partner_ids: row.partner_ids}))
    .execute()
}

export async function findQuota(db: Db, projectId: string, quotaId: string): Promise<QuotaRow | undefined> {
  return db.selectFrom('partner_quotas').selectAll().where('project_id', '=', projectId).where('quota_id', '=', quotaId).executeTakeFirst()
}

export async function listQuotas(db: Db, projectId: string): Promise<QuotaRow[]> {
  return db.selectFrom('partner_quotas').selectAll().where('project_id', '=', projectId).orderBy('quota_id').execute()
}

export async function saveQuota(db: Db, row: QuotaRow): Promise<void> {
  await db
    .insertInto('partner_quotas')
    .values(row)
    .onConflict((oc) => oc.columns(['project_id', 'quota_id']).doUpdateSet({status: row.status, limit_count: row.limit_count, completes: row.completes, body: row.body}))
    .execute()
}

export async function listMembers(db: Db, projectId: string, quotaId: string): Promise<QuotaMemberRow[]> {
  return db.selectFrom('partner_quota_members').selectAll().where('project_id', '=', projectId).where('quota_id', '=', quotaId).orderBy('position').execute()
}

export async function findMember(db: Db, projectId: string, quotaId: string, npi: string): Promise<QuotaMemberRow | undefined> {
  return db.selectFrom('partner_quota_members').selectAll().where('project_id', '=', projectId).where('quota_id', '=', quotaId).where('npi', '=', npi).executeTakeFirst()
}

/** Which of `npis` are already on the list (for append). */
export async function existingMemberNpis(db: Db, projectId: string, quotaId: string, npis: string[]): Promise<Set<string>> {
  const found = new Set<string>()
  for (let i = 0; i < npis.length; i += 500) {
    const rows = await db
      .selectFrom('partner_quota_members')
      .select('npi')
      .where('project_id', '=', projectId)
      .where('quota_id', '=', quotaId)
      .where('npi', 'in', npis.slice(i, i + 500))
      .execute()
    for (const row of rows) found.add(row.npi)
  }
  return found
}

export async function maxMemberPosition(db: Db, projectId: string, quotaId: string): Promise<number> {
  const row = await db
    .selectFrom('partner_quota_members')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('project_id', '=', projectId)
    .where('quota_id', '=', quotaId)
    .executeTakeFirst()
  return Number(row?.max ?? 0)
}

export async function deleteMembers(db: Db, projectId: string, quotaId: string): Promise<void> {
  await db.deleteFrom('partner_quota_members').where('project_id', '=', projectId).where('quota_id', '=', quotaId).execute()
}

export async function deleteMember(db: Db, projectId: string, quotaId: string, npi: string): Promise<void> {
  await db.deleteFrom('partner_quota_members').where('project_id', '=', projectId).where('quota_id', '=', quotaId).where('npi', '=', npi).execute()
}

export async function insertMembers(db: Db, rows: QuotaMemberRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('partner_quota_members')
      .values(rows.slice(i, i + 500))
      .execute()
  }
}

export async function countMembers(db: Db, projectId: string, quotaId: string): Promise<number> {
  const row = await db
    .selectFrom('partner_quota_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .where('quota_id', '=', quotaId)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

export async function insertEvent(db: Db, row: Omit<EventRow, 'id'>): Promise<number> {
  const result = await db.insertInto('partner_events').values(row).returning('id').executeTakeFirstOrThrow()
  return result.id
}

export async function hasCompleted(db: Db, projectId: string, quotaId: string, npi: string): Promise<boolean> {
  const row = await db
    .selectFrom('partner_events')
    .select('id')
    .where('project_id', '=', projectId)
    .where('quota_id', '=', quotaId)
    .where('npi', '=', npi)
    .where('state', '=', 'complete')
    .executeTakeFirst()
  return row !== undefined
}

export async function listEvents(db: Db, projectId: string): Promise<EventRow[]> {
  return db.selectFrom('partner_events').selectAll().where('project_id', '=', projectId).orderBy('id').execute()
}

// ---- outbox ----

export async function insertDeliveries(db: Db, rows: (NewDeliveryRow & {body: string | null})[]): Promise<void> {
  for (const {body, ...row} of rows) {
    const {seq} = await db.insertInto('partner_deliveries').values(row).returning('seq').executeTakeFirstOrThrow()
    if (body !== null) await db.insertInto('partner_delivery_bodies').values({seq, body}).execute()
  }
}

export async function deliveryBody(db: Db, seq: number): Promise<string | null> {
  const row = await db.selectFrom('partner_delivery_bodies').select('body').where('seq', '=', seq).executeTakeFirst()
  return row?.body ?? null
}

/** Pending rows of one partner and project, oldest first. */
export async function pendingOfProject(db: Db, clientId: string, projectId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('partner_deliveries')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('project_id', '=', projectId)
    .where('status', '=', 'pending')
    .orderBy('seq')
    .execute()
}

export async function setStatus(db: Db, seqs: number[], status: DeliveryStatus, now: string): Promise<void> {
  for (let i = 0; i < seqs.length; i += 500) {
    await db
      .updateTable('partner_deliveries')
      .set({status, updated_at: now})
      .where('seq', 'in', seqs.slice(i, i + 500))
      .execute()
  }
}

export interface DeliveryFilter {
  status?: DeliveryStatus
  projectId?: string
  ids?: string[]
  limit?: number
}

export async function listDeliveries(db: Db, filter: DeliveryFilter): Promise<DeliveryRow[]> {
  let query = db.selectFrom('partner_deliveries').selectAll()
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.projectId) query = query.where('project_id', '=', filter.projectId)
  if (filter.ids) query = query.where('id', 'in', filter.ids.length ? filter.ids : [''])
  query = query.orderBy('seq', filter.limit ? 'desc' : 'asc')
  if (filter.limit) query = query.limit(filter.limit)
  const rows = await query.execute()
  return filter.limit ? rows.reverse() : rows
}

export interface ClaimFilter {
  now: string
  /** Only these projects (a `--wait` run). */
  projectIds?: string[]
  /** Treat pending rows as due now, whatever their backoff says (a `--wait` run). */
  ignoreSchedule?: boolean
  /** Rows this run already tried once. */
  exclude?: number[]
  limit: number
}

type DeliveryQuery<O> = SelectQueryBuilder<Database & {d: PartnerDeliveryTable}, 'd', O>

/**
 * Pending, not leased by a live sender, and first in line for its partner and project: nothing
 * older of the same project to the same partner is still pending (per-project FIFO).
 */
function readyAndFirstInLine<O>(query: DeliveryQuery<O>, now: string): DeliveryQuery<O> {
  return query
    .where('d.status', '=', 'pending')
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<', now)]))
    .where(({not, exists, selectFrom}) =>
      not(
        exists(
          selectFrom('partner_deliveries as e')
            .select(sql.lit(1).as('one'))
            .whereRef('e.client_id', '=', 'd.client_id')
            .whereRef('e.project_id', '=', 'd.project_id')
            .where('e.status', '=', 'pending')
            .whereRef('e.seq', '<', 'd.seq'),
        ),
      ),
    )
}

/**
 * The deliveries that may be sent now: pending, due, not leased by a live sender, and first in
 * line for their partner and project (nothing older of the same project is still pending).
 */
export async function claimable(db: Db, filter: ClaimFilter): Promise<DeliveryRow[]> {
  const query = claimableRows(db.selectFrom('partner_deliveries as d').selectAll('d'), filter)
  return claimForUpdate(db, query.orderBy('d.seq').limit(filter.limit)).execute()
}

/**
 * Whether `claimable` would find a row, asked with a plain read that locks nothing: an idle
 * worker polls with this and opens no write transaction. It is only a hint; the claim that
 * follows decides, so a row claimed by another process in between is simply not found there.
 */
export async function anyClaimable(db: Db, filter: Omit<ClaimFilter, 'limit'>): Promise<boolean> {
  const row = await claimableRows(db.selectFrom('partner_deliveries as d').select('d.seq'), filter).limit(1).executeTakeFirst()
  return row !== undefined
}

function claimableRows<O>(query: DeliveryQuery<O>, filter: Omit<ClaimFilter, 'limit'>): DeliveryQuery<O> {
  let q = readyAndFirstInLine(query, filter.now)
  if (!filter.ignoreSchedule) q = q.where('d.next_attempt_at', '<=', filter.now)
  if (filter.projectIds) q = q.where('d.project_id', 'in', filter.projectIds.length ? filter.projectIds : [''])
  if (filter.exclude?.length) q = q.where('d.seq', 'not in', filter.exclude)
  return q
}

export async function lease(db: Db, seqs: number[], owner: string, until: string): Promise<void> {
  if (seqs.length) await db.updateTable('partner_deliveries').set({lease_owner: owner, lease_until: until}).where('seq', 'in', seqs).execute()
}

export async function updateDelivery(db: Db, seq: number, patch: Partial<Omit<DeliveryRow, 'seq' | 'id'>>): Promise<void> {
  await db.updateTable('partner_deliveries').set(patch).where('seq', '=', seq).execute()
}

/** Leased rows, for releasing those whose owner process died. */
export async function leasedRows(db: Db): Promise<Pick<DeliveryRow, 'seq' | 'lease_owner' | 'lease_until' | 'project_id'>[]> {
  return db
    .selectFrom('partner_deliveries')
    .select(['seq', 'lease_owner', 'lease_until', 'project_id'])
    .where('status', '=', 'pending')
    .where('lease_owner', 'is not', null)
    .execute()
}

export async function releaseLeases(db: Db, seqs: number[]): Promise<void> {
  if (seqs.length) await db.updateTable('partner_deliveries').set({lease_owner: null, lease_until: null}).where('seq', 'in', seqs).execute()
}

/**
 * The earliest time a delivery that is first in its project's line becomes due (for the worker's
 * sleep). Rows waiting behind another, or being sent by another process, do not count.
 */
export async function nextDue(db: Db, now: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('partner_deliveries as d')
    .select((eb) => eb.fn.min('d.next_attempt_at').as('next'))
    .$call((q) => readyAndFirstInLine(q, now))
    .executeTakeFirst()
  return (row?.next as string | null | undefined) ?? undefined
}

/** A later PUT of the same resource exists (not counting superseded ones). */
export async function hasLaterPut(db: Db, row: Pick<DeliveryRow, 'seq' | 'client_id' | 'path'>): Promise<boolean> {
  const later = await db
    .selectFrom('partner_deliveries')
    .select('seq')
    .where('client_id', '=', row.client_id)
    .where('path', '=', row.path)
    .where('method', '=', 'PUT')
    .where('status', '!=', 'superseded')
    .where('seq', '>', row.seq)
    .executeTakeFirst()
  return later !== undefined
}

/** Pending deliveries per partner client: how many, and when the oldest was queued (the metrics' outbox gauges). */
export async function pendingByClient(db: Db): Promise<{client_id: string; depth: number; oldest: string}[]> {
  const rows = await db
    .selectFrom('partner_deliveries')
    .select(['client_id', (eb) => eb.fn.countAll<number>().as('depth'), (eb) => eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .groupBy('client_id')
    .execute()
  return rows.map((row) => ({client_id: row.client_id, depth: Number(row.depth), oldest: String(row.oldest)}))
}

// What operators read of projects and the outbox (list-projects, show-project, list-deliveries),
// and what remove-client takes away. Paged in SQL: a command must not read every row to print a page.

/** One page of projects in id order, each with how many quotas it has. */
export async function pageProjectRows(db: Db, ask: PageAsk & {status?: string}): Promise<Page<ProjectRow & {quotas: number | string | null}>> {
  let query = db.selectFrom('partner_projects')
  if (ask.status !== undefined) query = query.where('status', '=', ask.status as never)
  const [rows, count] = await Promise.all([
    query
      .selectAll()
      .select((eb) =>
        eb.selectFrom('partner_quotas as q').select(eb.fn.countAll<number | string>().as('n')).whereRef('q.project_id', '=', 'partner_projects.project_id').as('quotas'),
      )
      .orderBy('project_id')
      .limit(ask.limit)
      .offset(ask.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows, total: Number(count.n)}
}

/** The deliveries of these projects counted by project and status, with the last delivered_at of each. */
export async function deliveryStatusCounts(db: Db, projectIds: string[]) {
  return db
    .selectFrom('partner_deliveries')
    .select((eb) => ['project_id', 'status', eb.fn.countAll<number | string>().as('n'), eb.fn.max('delivered_at').as('last')])
    .where('project_id', 'in', projectIds)
    .groupBy(['project_id', 'status'])
    .execute()
}

/** A project's quotas in id order, each with how many members it has. */
export async function quotasWithMemberCounts(db: Db, projectId: string) {
  return db
    .selectFrom('partner_quotas as q')
    .select(['q.quota_id', 'q.status', 'q.limit_count', 'q.completes'])
    .select((eb) =>
      eb
        .selectFrom('partner_quota_members as m')
        .select(eb.fn.countAll<number | string>().as('n'))
        .whereRef('m.project_id', '=', 'q.project_id')
        .whereRef('m.quota_id', '=', 'q.quota_id')
        .as('members'),
    )
    .where('q.project_id', '=', projectId)
    .orderBy('q.quota_id')
    .execute()
}

/** The project's last queued delivery, whatever its status. */
export async function lastDelivery(db: Db, projectId: string) {
  return db
    .selectFrom('partner_deliveries')
    .select(['id', 'client_id', 'method', 'path', 'status', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/** One page of the outbox counted back from the newest row, newest first. */
export async function pageDeliveryRows(db: Db, ask: PageAsk & {status?: DeliveryStatus; projectId?: string; since?: string}): Promise<Page<DeliveryRow>> {
  let query = db.selectFrom('partner_deliveries')
  if (ask.status) query = query.where('status', '=', ask.status)
  if (ask.projectId) query = query.where('project_id', '=', ask.projectId)
  if (ask.since) query = query.where('created_at', '>=', ask.since)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('seq', 'desc').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows, total: Number(count.n)}
}

/**
 * Projects whose partner list may name the client: partner_ids is a JSON list in a text column, so
 * a LIKE narrows it on both stores, and the caller's parse of the list decides.
 */
export async function projectsMaybeListing(db: Db, clientId: string): Promise<Pick<ProjectRow, 'project_id' | 'partner_ids'>[]> {
  return db
    .selectFrom('partner_projects')
    .select(['project_id', 'partner_ids'])
    .where(sql<boolean>`partner_ids like ${`%${JSON.stringify(clientId).slice(1, -1)}%`}`)
    .execute()
}

export async function setPartnerIds(db: Db, projectId: string, partnerIds: ProjectRow['partner_ids']): Promise<void> {
  await db.updateTable('partner_projects').set({partner_ids: partnerIds}).where('project_id', '=', projectId).execute()
}

/** Deletes a client's deliveries not yet made (pending or failed); delivered and superseded rows stay as history. */
export async function deleteUndelivered(db: Db, clientId: string): Promise<void> {
  await db.deleteFrom('partner_deliveries').where('client_id', '=', clientId).where('status', 'in', UNDELIVERED).execute()
}
