import {sql} from 'kysely'
import {narrow} from '../store/database.js'
import {AppError, notFound} from '../errors.js'
import {clientCredentialCounts, deleteClientCredentials} from '../grants/repository.js'
import {iso} from '../lib/clock.js'
import {isUuid} from '../lib/ids.js'
import {apiKeyView, currentPeriod, findApiKeyRow, type ApiKeyView} from '../interfaces/conversations/keys.js'
import {getTransaction, type TransactionView} from '../interfaces/balance/service.js'
import {findTransaction} from '../interfaces/balance/repository.js'
import type {Db} from '../schema.js'
import {deliveryView, type DeliveryView} from '../interfaces/partner/outbox.js'
import type {DeliveryStatus} from '../interfaces/partner/tables.js'
import {writeTransaction} from '../store/db.js'
import {getClientRow} from '../registry/views.js'
import type {Page, PageAsk} from './members.js'

/*
 * Reads and removals for the operator commands (list-api-keys, list-projects, remove-client, …)
 * that no HTTP interface needs. Lists are paged in SQL: a store may hold tens of thousands of
 * members, and a command must not read them all to print a hundred.
 */

/** An API key as operators list it: never the key itself (the store keeps only its hash). */
export interface ApiKeyListItem extends ApiKeyView {
  data_calls_used: number
  period_started_at: string
  status: 'active' | 'revoked' | 'lapsed'
}

export async function pageApiKeys(db: Db, ask: PageAsk & {clientId?: string}, now: Date): Promise<Page<ApiKeyListItem>> {
  if (ask.clientId !== undefined) await getClientRow(narrow(db), ask.clientId)
  let query = db.selectFrom('conversation_api_keys')
  if (ask.clientId !== undefined) query = query.where('client_id', '=', ask.clientId)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows: rows.map((row) => apiKeyListItem(row, now)), total: Number(count.n)}
}

function apiKeyListItem(row: Awaited<ReturnType<typeof findApiKeyRow>>, now: Date): ApiKeyListItem {
  const period = currentPeriod(row, now)
  const lapsed = row.subscription_ends_at !== null && now.getTime() >= new Date(row.subscription_ends_at).getTime()
  return {
    ...apiKeyView(row, now),
    data_calls_used: period.used,
    period_started_at: iso(period.started),
    status: row.revoked_at !== null ? 'revoked' : lapsed ? 'lapsed' : 'active',
  }
}

/** One API key as list-api-keys shows it, by its id or by the key itself. */
export async function showApiKey(db: Db, keyOrId: string, now: Date): Promise<ApiKeyListItem> {
  return apiKeyListItem(await findApiKeyRow(narrow(db), keyOrId), now)
}

/** Revokes one key; says whether it already was, so a second run changes nothing and says so. */
export async function revokeApiKey(db: Db, keyOrId: string, now: Date): Promise<{id: string; client_id: string; revoked_at: string; already_revoked: boolean}> {
  return writeTransaction(db, async (trx) => {
    const row = await findApiKeyRow(narrow(trx), keyOrId)
    if (row.revoked_at !== null) return {id: row.id, client_id: row.client_id, revoked_at: row.revoked_at, already_revoked: true}
    const stamp = iso(now)
    await trx.updateTable('conversation_api_keys').set({revoked_at: stamp, updated_at: stamp}).where('id', '=', row.id).execute()
    return {id: row.id, client_id: row.client_id, revoked_at: stamp, already_revoked: false}
  })
}

/** One ledger transaction as interface C shows it, plus the member it belongs to. */
export async function transactionWithMember(db: Db, id: string): Promise<TransactionView & {member: {user_id: number; email: string; name: string}}> {
  const wanted = id.trim().toLowerCase()
  if (!isUuid(wanted)) throw new AppError('bad_request', `a transaction id is a UUID (as list-transactions shows it), got ${JSON.stringify(id.slice(0, 64))}`)
  const view = await getTransaction(narrow(db), wanted)
  const row = await findTransaction(narrow(db), wanted)
  if (!row) throw notFound(`no transaction with id ${wanted}`)
  const member = await db.selectFrom('members').select(['id', 'email', 'first_name', 'last_name']).where('id', '=', row.member_id).executeTakeFirst()
  return {...view, member: member ? {user_id: member.id, email: member.email, name: `${member.first_name} ${member.last_name}`} : {user_id: row.member_id, email: '', name: ''}}
}

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

async function deliveryCounts(db: Db, projectIds: string[]): Promise<Map<string, DeliveryCounts>> {
  const out = new Map<string, DeliveryCounts>()
  if (projectIds.length === 0) return out
  const rows = await db
    .selectFrom('partner_deliveries')
    .select((eb) => ['project_id', 'status', eb.fn.countAll<number | string>().as('n'), eb.fn.max('delivered_at').as('last')])
    .where('project_id', 'in', projectIds)
    .groupBy(['project_id', 'status'])
    .execute()
  for (const id of projectIds) out.set(id, {pending: 0, failed: 0, delivered: 0, superseded: 0, last_delivered_at: null})
  for (const row of rows) {
    const counts = out.get(row.project_id)!
    if (row.status in counts) (counts as unknown as Record<string, number>)[row.status] = Number(row.n)
    if (row.last && (counts.last_delivered_at === null || row.last > counts.last_delivered_at)) counts.last_delivered_at = row.last
  }
  return out
}

function parsed(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

function partnerList(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  } catch {
    return []
  }
}

export async function pageProjects(db: Db, ask: PageAsk & {status?: string}): Promise<Page<ProjectListItem>> {
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
    total: Number(count.n),
  }
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

export async function projectDetail(db: Db, projectId: string): Promise<ProjectDetail> {
  const row = await db.selectFrom('partner_projects').selectAll().where('project_id', '=', projectId).executeTakeFirst()
  if (!row) throw notFound(`no project "${projectId}" (list-projects shows them)`)
  const quotas = await db
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
  const last = await db
    .selectFrom('partner_deliveries')
    .select(['id', 'client_id', 'method', 'path', 'status', 'created_at', 'updated_at'])
    .where('project_id', '=', projectId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst()
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

/** What depends on a client, by the words remove-client uses for each. */
export interface ClientDependents {
  access_tokens: number
  authorization_codes: number
  api_keys: number
  pulses: number
  /** Outbox rows to this partner not yet delivered (pending or failed). */
  undelivered_deliveries: number
  /** Partner projects that list this client as a receiving partner. */
  partner_projects: number
}

async function countWhere(db: Db, table: 'conversation_api_keys' | 'pulses', clientId: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function projectsListing(db: Db, clientId: string): Promise<{project_id: string; partner_ids: string}[]> {
  // partner_ids is a JSON list in a text column: a LIKE narrows it on both stores, the parse decides.
  const rows = await db
    .selectFrom('partner_projects')
    .select(['project_id', 'partner_ids'])
    .where(sql<boolean>`partner_ids like ${`%${JSON.stringify(clientId).slice(1, -1)}%`}`)
    .execute()
  return rows.filter((r) => partnerList(r.partner_ids).includes(clientId))
}

export async function clientDependents(db: Db, clientId: string): Promise<ClientDependents> {
  const undelivered = await db
    .selectFrom('partner_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('client_id', '=', clientId)
    .where('status', 'in', ['pending', 'failed'])
    .executeTakeFirstOrThrow()
  return {
    ...(await clientCredentialCounts(narrow(db), clientId)),
    api_keys: await countWhere(db, 'conversation_api_keys', clientId),
    pulses: await countWhere(db, 'pulses', clientId),
    undelivered_deliveries: Number(undelivered.n),
    partner_projects: (await projectsListing(db, clientId)).length,
  }
}

export function dependentsText(d: ClientDependents): string {
  const parts: [number, string, string][] = [
    [d.access_tokens, 'access token', 'access tokens'],
    [d.authorization_codes, 'authorization code', 'authorization codes'],
    [d.api_keys, 'API key', 'API keys'],
    [d.pulses, 'pulse', 'pulses'],
    [d.undelivered_deliveries, 'undelivered partner delivery', 'undelivered partner deliveries'],
    [d.partner_projects, 'partner project listing it', 'partner projects listing it'],
  ]
  return parts
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => `${n} ${n === 1 ? one : many}`)
    .join(', ')
}

/**
 * Removes a client. Without `force` it refuses while anything depends on it: the schema would
 * cascade the delete to its tokens, codes, API keys (with their call log) and pulses (with their
 * respondents and answers) on both stores, which is data an operator may not know they are losing.
 * With `force` all of that goes, in one transaction, together with its undelivered partner
 * deliveries (a removed partner cannot receive them), and it is taken off the partner lists of
 * projects. Delivered outbox rows and ledger entries it posted stay as history.
 */
export async function removeClient(db: Db, clientId: string, force: boolean): Promise<{client_id: string; removed: ClientDependents}> {
  return writeTransaction(db, async (trx) => {
    await getClientRow(narrow(trx), clientId)
    const dependents = await clientDependents(trx, clientId)
    const text = dependentsText(dependents)
    if (text !== '' && !force) {
      throw new AppError('conflict', `client ${clientId} still has ${text}; remove-client --force removes them with it`)
    }
    await deleteClientCredentials(narrow(trx), clientId)
    await trx.deleteFrom('conversation_api_keys').where('client_id', '=', clientId).execute()
    await trx.deleteFrom('pulses').where('client_id', '=', clientId).execute()
    await trx.deleteFrom('partner_deliveries').where('client_id', '=', clientId).where('status', 'in', ['pending', 'failed']).execute()
    for (const project of await projectsListing(trx, clientId)) {
      const kept = partnerList(project.partner_ids).filter((id) => id !== clientId)
      await trx
        .updateTable('partner_projects')
        .set({partner_ids: JSON.stringify(kept) as never})
        .where('project_id', '=', project.project_id)
        .execute()
    }
    await trx.deleteFrom('clients').where('id', '=', clientId).execute()
    return {client_id: clientId, removed: dependents}
  })
}

/**
 * The outbox newest first, one page at a time, each page shown oldest first: the newest rows are
 * the ones an operator looks for, and within a page the order they were queued reads naturally.
 */
export async function pageDeliveries(db: Db, ask: PageAsk & {status?: DeliveryStatus; projectId?: string; since?: string}): Promise<Page<DeliveryView>> {
  let query = db.selectFrom('partner_deliveries')
  if (ask.status) query = query.where('status', '=', ask.status)
  if (ask.projectId) query = query.where('project_id', '=', ask.projectId)
  if (ask.since) query = query.where('created_at', '>=', ask.since)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('seq', 'desc').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows: rows.reverse().map(deliveryView), total: Number(count.n)}
}
