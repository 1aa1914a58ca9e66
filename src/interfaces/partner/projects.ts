import {notFound} from '../../errors.js'
import type {Page, PageAsk} from '../../lib/page.js'
import {countByClient, type ClientHolding} from '../../store/client-holding.js'
import {toJsonText} from '../../store/json.js'
import {deliveryView, type DeliveryView} from './outbox.js'
import * as repo from './repository.js'
import type {DeliveryStatus, PartnerDb as Db, PartnerView} from './tables.js'

/*
 * What operators read of interface B beyond its routes: projects with their delivery state
 * (list-projects, show-project), the outbox page by page (list-deliveries), and what B keeps for
 * a partner client that remove-client takes away.
 */

export interface DeliveryCounts {
  pending: number
  failed: number
  delivered: number
  superseded: number
  /** When the last delivery of this project reached a partner; null when none has. */
  last_delivered_at: string | null
}

export interface ProjectListItem extends DeliveryCounts {
  project_id: string
  name: string | null
  status: string
  partners: string[]
  quotas: number
}

export interface ProjectDetail {
  project_id: string
  status: string
  partners: string[]
  project: Record<string, unknown>
  quotas: {quota_id: string; status: string; limit: number; completes: number; members: number}[]
  deliveries: DeliveryCounts
  last_delivery: {id: string; client_id: string; request: string; status: string; at: string} | null
}

async function deliveryCounts(db: Db, projectIds: string[]): Promise<Map<string, DeliveryCounts>> {
  const out = new Map<string, DeliveryCounts>()
  if (projectIds.length === 0) return out
  const rows = await repo.deliveryStatusCounts(db, projectIds)
  for (const id of projectIds) out.set(id, {pending: 0, failed: 0, delivered: 0, superseded: 0, last_delivered_at: null})
  for (const row of rows) {
    const counts = out.get(row.project_id)!
    if (row.status in counts) (counts as unknown as Record<string, number>)[row.status] = Number(row.n)
    if (row.last && (counts.last_delivered_at === null || row.last > counts.last_delivered_at)) counts.last_delivered_at = row.last
  }
  return out
}

/** A stored project body, read leniently: an operator's listing shows what it can. */
function parsed(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** A stored partner list, read leniently (the strings in it). */
function partnerList(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  } catch {
    return []
  }
}

export async function pageProjects(db: Db, ask: PageAsk & {status?: string}): Promise<Page<ProjectListItem>> {
  const {rows, total} = await repo.pageProjectRows(db, ask)
  const counts = await deliveryCounts(
    db,
    rows.map((r) => r.project_id),
  )
  return {
    rows: rows.map((row) => {
      const name = parsed(row.body).name
      return {
        project_id: row.project_id,
        name: typeof name === 'string' ? name : null,
        status: row.status,
        partners: partnerList(row.partner_ids),
        quotas: Number(row.quotas ?? 0),
        ...counts.get(row.project_id)!,
      }
    }),
    total,
  }
}

export async function projectDetail(db: Db, projectId: string): Promise<ProjectDetail> {
  const row = await repo.findProject(db, projectId)
  if (!row) throw notFound(`no project "${projectId}" (list-projects shows them)`)
  const quotas = await repo.quotasWithMemberCounts(db, projectId)
  const last = await repo.lastDelivery(db, projectId)
  return {
    project_id: row.project_id,
    status: row.status,
    partners: partnerList(row.partner_ids),
    project: parsed(row.body),
    quotas: quotas.map((q) => ({quota_id: q.quota_id, status: q.status, limit: q.limit_count, completes: q.completes, members: Number(q.members ?? 0)})),
    deliveries: (await deliveryCounts(db, [projectId])).get(projectId)!,
    last_delivery: last ? {id: last.id, client_id: last.client_id, request: `${last.method} ${last.path}`, status: last.status, at: last.updated_at} : null,
  }
}

/**
 * The outbox newest first, one page at a time, each page shown oldest first: the newest rows are
 * the ones an operator looks for, and within a page the order they were queued reads naturally.
 */
export async function pageDeliveries(db: Db, ask: PageAsk & {status?: DeliveryStatus; projectId?: string; since?: string}): Promise<Page<DeliveryView>> {
  const {rows, total} = await repo.pageDeliveryRows(db, ask)
  return {rows: rows.reverse().map(deliveryView), total}
}

/** The projects whose partner list names the client. */
async function projectsListing(db: Db, clientId: string): Promise<{project_id: string; partner_ids: string}[]> {
  return (await repo.projectsMaybeListing(db, clientId)).filter((r) => partnerList(r.partner_ids).includes(clientId))
}

/**
 * What B keeps for a partner client: deliveries to it not yet made (a removed partner cannot
 * receive them) and the projects that list it as a partner, which it is taken off. Delivered
 * outbox rows stay as history.
 */
export const partnerHolding: ClientHolding<PartnerView, 'undelivered_deliveries' | 'partner_projects'> = {
  count: async (db, clientId) => ({
    undelivered_deliveries: await countByClient(db, 'partner_deliveries', clientId, {status: repo.UNDELIVERED}),
    partner_projects: (await projectsListing(db, clientId)).length,
  }),
  release: async (trx, clientId) => {
    await repo.deleteUndelivered(trx, clientId)
    for (const project of await projectsListing(trx, clientId)) {
      await repo.setPartnerIds(trx, project.project_id, toJsonText(partnerList(project.partner_ids).filter((id) => id !== clientId)))
    }
  },
}
