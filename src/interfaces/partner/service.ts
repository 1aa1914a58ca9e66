import {z} from 'zod'
import {AppError, notFound} from '../../errors.js'
import {iso} from '../../lib/clock.js'
import {parseInput} from '../../lib/validate.js'
import {writeTransaction} from '../../store/transactions.js'
import type {PartnerDb as Db} from './tables.js'
import {fromJsonText, toJsonText} from '../../store/json.js'
import {enqueue, paths, resolvePartners, type Push} from './outbox.js'
import * as repo from './repository.js'
import {
  eventBody,
  eventInputSchema,
  id as idSchema,
  memberJson,
  memberSchema,
  projectBody,
  projectInputSchema,
  projectSchema,
  quotaBody,
  quotaInputSchema,
  quotaSchema,
  type EventState,
  type Project,
  type ProjectInput,
  type Quota,
  type QuotaInput,
  type QuotaMember,
  type SurveyEvent,
} from './schema.js'
import type {ProjectRow, QuotaRow} from './tables.js'
import {partnerConfig} from './config.js'

/**
 * Interface B's rules on medpanel's side. Every function validates first (nothing is stored or
 * queued for bad input), then changes the store and queues the resulting pushes in one write
 * transaction.
 */

export interface Queued {
  /** Delivery ids queued by this change, in send order (all partners). */
  deliveries: string[]
  partners: string[]
}

export const DEFAULT_CHUNK = partnerConfig.memberChunk

function projectOf(row: ProjectRow): Project {
  return fromJsonText(row.body, projectSchema, `the stored body of project ${row.project_id}`)
}

function quotaOf(row: QuotaRow): Quota {
  return fromJsonText(row.body, quotaSchema, `the stored body of quota ${row.quota_id}`)
}

async function requireProject(db: Db, projectId: string): Promise<ProjectRow> {
  const row = await repo.findProject(db, projectId)
  if (!row) throw notFound(`no project "${projectId}"; push it first with push-project`)
  return row
}

async function requireQuota(db: Db, projectId: string, quotaId: string): Promise<QuotaRow> {
  const row = await repo.findQuota(db, projectId, quotaId)
  if (!row) throw notFound(`no quota "${quotaId}" in project "${projectId}"; push it first with push-quota`)
  return row
}

const STORED_PARTNERS = z.array(z.string())

function partnersOf(row: ProjectRow): string[] {
  return fromJsonText(row.partner_ids, STORED_PARTNERS, `the partners of project ${row.project_id}`)
}

function quotaRow(quota: Quota, completes: number): QuotaRow {
  return {project_id: quota.project_id, quota_id: quota.quota_id, status: quota.status, limit_count: quota.limit, completes, body: quotaBody(quota)}
}

function quotaPush(quota: Quota): Push {
  return {kind: 'quota', method: 'PUT', path: paths.quota(quota.project_id, quota.quota_id), quotaId: quota.quota_id, body: quotaBody(quota)}
}

function projectPush(project: Project): Push {
  return {kind: 'project', method: 'PUT', path: paths.project(project.project_id), quotaId: null, body: projectBody(project)}
}

/** Closes every open quota of a project (updated now), returning their PUTs in quota order. */
async function closeQuotas(db: Db, projectId: string, stamp: string): Promise<{pushes: Push[]; closed: string[]}> {
  const pushes: Push[] = []
  const closed: string[] = []
  for (const row of await repo.listQuotas(db, projectId)) {
    if (row.status !== 'open') continue
    const quota: Quota = {...quotaOf(row), status: 'closed', updated_at: stamp}
    await repo.saveQuota(db, quotaRow(quota, row.completes))
    pushes.push(quotaPush(quota))
    closed.push(quota.quota_id)
  }
  return {pushes, closed}
}

/** Every quota of a project and its member list, as the pushes that recreate them at a partner. */
async function snapshot(db: Db, projectId: string): Promise<Push[]> {
  const pushes: Push[] = []
  for (const row of await repo.listQuotas(db, projectId)) {
    pushes.push(quotaPush(quotaOf(row)))
    const list = (await repo.listMembers(db, projectId, row.quota_id)).map(memberJson)
    const path = paths.members(projectId, row.quota_id)
    for (const [i, chunk] of chunked(list, DEFAULT_CHUNK).entries())
      pushes.push({kind: 'members', method: i === 0 ? 'PUT' : 'POST', path, quotaId: row.quota_id, body: JSON.stringify(chunk)})
  }
  return pushes
}

export interface PushProjectResult extends Queued {
  project: Project
  closed_quotas: string[]
}

/**
 * Creates or replaces a project. `partners` picks the partner clients that receive it; on a new
 * project without it, every partner client does. A project pushed as closed closes its open
 * quotas first (their PUTs go before the project's), as the spec's close transition says.
 */
export async function pushProject(db: Db, input: ProjectInput, options: {partners?: string[]}, now: Date, requestId?: string): Promise<PushProjectResult> {
  const given = parseInput(projectInputSchema, input)
  return writeTransaction(db, async (trx) => {
    const existing = await repo.findProject(trx, given.project_id)
    const stamp = iso(now)
    const project: Project = parseInput(projectSchema, {
      ...given,
      created_at: given.created_at ?? (existing ? projectOf(existing).created_at : stamp),
      updated_at: given.updated_at ?? stamp,
    })
    const partners = options.partners?.length || !existing ? await resolvePartners(trx, options.partners) : partnersOf(existing)
    const {pushes, closed} = project.status === 'closed' ? await closeQuotas(trx, project.project_id, stamp) : {pushes: [], closed: []}
    await repo.saveProject(trx, {project_id: project.project_id, status: project.status, body: projectBody(project), partner_ids: toJsonText(partners)})
    // A partner added to a running project gets the project, then everything it already holds.
    const known = new Set(existing ? partnersOf(existing) : [])
    const added = existing ? partners.filter((id) => !known.has(id)) : []
    const current = partners.filter((id) => !added.includes(id))
    const deliveries = await enqueue(trx, project.project_id, current, [...pushes, projectPush(project)], now, requestId)
    if (added.length) deliveries.push(...(await enqueue(trx, project.project_id, added, [projectPush(project), ...(await snapshot(trx, project.project_id))], now, requestId)))
    return {project, closed_quotas: closed, deliveries, partners}
  })
}

export interface PushQuotaResult extends Queued {
  quota: Quota
  completes: number
}

/** Creates or replaces a quota; pushing it as open reopens a closed one. */
export async function pushQuota(db: Db, projectId: string, input: Omit<QuotaInput, 'project_id'> & {project_id?: string}, now: Date, requestId?: string): Promise<PushQuotaResult> {
  const pid = parseInput(idSchema, projectId)
  if (input && typeof input === 'object' && 'project_id' in input && input.project_id !== pid) {
    throw new AppError('bad_request', `project_id: the file says "${String(input.project_id)}" but --project-id is "${pid}"`)
  }
  const given = parseInput(quotaInputSchema, {...input, project_id: pid})
  return writeTransaction(db, async (trx) => {
    const project = await requireProject(trx, pid)
    if (project.status === 'closed' && given.status === 'open') {
      throw new AppError('conflict', `status: project "${pid}" is closed, so its quotas cannot be open; push the project as active or onhold first`)
    }
    const existing = await repo.findQuota(trx, pid, given.quota_id)
    const stamp = iso(now)
    const quota: Quota = parseInput(quotaSchema, {
      ...input,
      project_id: pid,
      created_at: given.created_at ?? (existing ? quotaOf(existing).created_at : stamp),
      updated_at: given.updated_at ?? stamp,
    })
    const completes = existing?.completes ?? 0
    await repo.saveQuota(trx, quotaRow(quota, completes))
    const deliveries = await enqueue(trx, pid, partnersOf(project), [quotaPush(quota)], now, requestId)
    return {quota, completes, deliveries, partners: partnersOf(project)}
  })
}

/** Sets a quota's status (close or reopen) keeping the rest of its representation. */
export async function setQuotaStatus(db: Db, projectId: string, quotaId: string, status: 'open' | 'closed', now: Date, requestId?: string): Promise<PushQuotaResult> {
  const row = await requireQuota(db, projectId, quotaId)
  const {created_at, project_id: _p, updated_at: _u, ...rest} = quotaOf(row)
  return pushQuota(db, projectId, {...rest, status, created_at}, now, requestId)
}

export interface PushMembersOptions {
  projectId: string
  quotaId: string
  members: unknown[]
  /** POST the members after the current list instead of replacing it. */
  append?: boolean
  chunk?: number
  /** Where each member came from, for error messages (e.g. CSV line numbers). */
  label?: (index: number) => string
  /** Called as members are stored: (stored so far, total). */
  onProgress?: (done: number, total: number) => void
}

export interface PushMembersResult extends Queued {
  project_id: string
  quota_id: string
  mode: 'replace' | 'append'
  members: number
  total: number
  requests: number
}

/** Checks a member list: every member valid, no NPI twice. */
export function parseMembers(members: unknown[], label: (index: number) => string = (i) => `members[${i}]`): QuotaMember[] {
  if (!Array.isArray(members)) throw new AppError('bad_request', 'members: must be an array of quota members')
  const seen = new Set<string>()
  return members.map((raw, i) => {
    const result = memberSchema.safeParse(raw)
    if (!result.success) {
      const issue = result.error.issues[0]
      const field = issue?.path.length ? `.${issue.path.join('.')}` : ''
      throw new AppError('bad_request', `${label(i)}${field}: ${issue?.message ?? 'invalid member'}`)
    }
    if (seen.has(result.data.npi)) throw new AppError('bad_request', `${label(i)}.npi: ${result.data.npi} appears more than once in the list`)
    seen.add(result.data.npi)
    return result.data
  })
}

function chunked<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/**
 * Replaces (PUT of the first chunk, then POSTs of the rest) or appends (POSTs) a quota's member
 * list. A replace of an empty list is one PUT of `[]`.
 */
export async function pushMembers(db: Db, options: PushMembersOptions, now: Date, requestId?: string): Promise<PushMembersResult> {
  const pid = parseInput(idSchema, options.projectId)
  const qid = parseInput(idSchema, options.quotaId)
  const size = options.chunk ?? DEFAULT_CHUNK
  if (!Number.isInteger(size) || size < 1 || size > 100_000) throw new AppError('bad_request', 'chunk: must be a whole number from 1 to 100000')
  const members = parseMembers(options.members, options.label)
  return writeTransaction(db, async (trx) => {
    const project = await requireProject(trx, pid)
    await requireQuota(trx, pid, qid)
    let start = 0
    if (options.append) {
      const already = await repo.existingMemberNpis(
        trx,
        pid,
        qid,
        members.map((m) => m.npi),
      )
      const clash = members.findIndex((m) => already.has(m.npi))
      if (clash >= 0) throw new AppError('conflict', `${(options.label ?? ((i) => `members[${i}]`))(clash)}.npi: ${members[clash]!.npi} is already on the quota's list`)
      start = await repo.maxMemberPosition(trx, pid, qid)
    } else {
      await repo.deleteMembers(trx, pid, qid)
    }
    const rows = members.map((m, i) => ({project_id: pid, quota_id: qid, npi: m.npi, honoraria: m.honoraria, url: m.url, position: start + i + 1}))
    for (let i = 0; i < rows.length; i += 5000) {
      await repo.insertMembers(trx, rows.slice(i, i + 5000))
      options.onProgress?.(Math.min(i + 5000, rows.length), rows.length)
    }
    const path = paths.members(pid, qid)
    const chunks = chunked(members, size)
    const pushes: Push[] = chunks.map((chunk, i) => ({
      kind: 'members',
      method: i === 0 && !options.append ? 'PUT' : 'POST',
      path,
      quotaId: qid,
      body: JSON.stringify(chunk.map(memberJson)),
    }))
    if (!options.append && pushes.length === 0) pushes.push({kind: 'members', method: 'PUT', path, quotaId: qid, body: '[]'})
    const deliveries = await enqueue(trx, pid, partnersOf(project), pushes, now, requestId)
    const total = await repo.countMembers(trx, pid, qid)
    return {
      project_id: pid,
      quota_id: qid,
      mode: options.append ? 'append' : 'replace',
      members: members.length,
      total,
      requests: pushes.length,
      deliveries,
      partners: partnersOf(project),
    }
  })
}

export interface RemoveMemberResult extends Queued {
  project_id: string
  quota_id: string
  npi: string
  total: number
}

export async function removeMember(db: Db, projectId: string, quotaId: string, npi: string, now: Date, requestId?: string): Promise<RemoveMemberResult> {
  const pid = parseInput(idSchema, projectId)
  const qid = parseInput(idSchema, quotaId)
  return writeTransaction(db, async (trx) => {
    const project = await requireProject(trx, pid)
    await requireQuota(trx, pid, qid)
    if (!(await repo.findMember(trx, pid, qid, npi))) throw notFound(`npi: ${npi} is not on the list of quota "${qid}"`)
    await repo.deleteMember(trx, pid, qid, npi)
    const deliveries = await enqueue(
      trx,
      pid,
      partnersOf(project),
      [{kind: 'member', method: 'DELETE', path: paths.member(pid, qid, npi), quotaId: qid, body: null}],
      now,
      requestId,
    )
    return {project_id: pid, quota_id: qid, npi, total: await repo.countMembers(trx, pid, qid), deliveries, partners: partnersOf(project)}
  })
}

export interface PushEventResult extends Queued {
  event: SurveyEvent
  reported_state: EventState
  quota: {quota_id: string; status: string; completes: number; limit: number; closed_now: boolean} | null
}

/**
 * Records a participant event and queues its POST. A start on a closed quota goes out as
 * quotafull (the participant is turned away); a complete counts toward the quota and, when it
 * reaches the limit, closes the quota — the event's POST is queued before that quota PUT.
 */
export async function pushEvent(
  db: Db,
  input: {project_id: string; npi: string; state: string; quota_id?: string; event_at?: string},
  now: Date,
  requestId?: string,
): Promise<PushEventResult> {
  const given = parseInput(eventInputSchema, input)
  return writeTransaction(db, async (trx) => {
    const project = await requireProject(trx, given.project_id)
    const stamp = iso(now)
    const event: SurveyEvent = {...given, event_at: given.event_at ?? stamp}
    let quotaInfo: PushEventResult['quota'] = null
    const pushes: Push[] = []
    let closing: Quota | undefined
    if (given.quota_id !== undefined) {
      const row = await requireQuota(trx, given.project_id, given.quota_id)
      let {completes, status} = row
      if (given.state === 'start' && row.status === 'closed') event.state = 'quotafull'
      if (given.state === 'complete') {
        if (await repo.hasCompleted(trx, given.project_id, given.quota_id, given.npi)) {
          throw new AppError('conflict', `npi: ${given.npi} already completed quota "${given.quota_id}"`)
        }
        completes += 1
        if (row.status === 'open' && completes >= row.limit_count) {
          status = 'closed'
          closing = {...quotaOf(row), status: 'closed', updated_at: stamp}
        }
        await repo.saveQuota(trx, closing ? quotaRow(closing, completes) : {...row, completes})
      }
      quotaInfo = {quota_id: row.quota_id, status, completes, limit: row.limit_count, closed_now: closing !== undefined}
    }
    await repo.insertEvent(trx, {
      project_id: event.project_id,
      quota_id: event.quota_id ?? null,
      npi: event.npi,
      reported_state: given.state,
      state: event.state,
      event_at: event.event_at,
      created_at: stamp,
    })
    pushes.push({kind: 'event', method: 'POST', path: paths.events(event.project_id), quotaId: event.quota_id ?? null, body: eventBody(event)})
    if (closing) pushes.push(quotaPush(closing))
    const deliveries = await enqueue(trx, event.project_id, partnersOf(project), pushes, now, requestId)
    return {event, reported_state: given.state, quota: quotaInfo, deliveries, partners: partnersOf(project)}
  })
}

export interface CloseProjectResult extends Queued {
  project: Project
  closed_quotas: string[]
  already_closed: boolean
}

/** Closes every open quota, then the project; each change is queued as its PUT, in that order. */
export async function closeProject(db: Db, projectId: string, now: Date, requestId?: string): Promise<CloseProjectResult> {
  const pid = parseInput(idSchema, projectId)
  return writeTransaction(db, async (trx) => {
    const row = await requireProject(trx, pid)
    const stamp = iso(now)
    const current = projectOf(row)
    const {pushes, closed} = await closeQuotas(trx, pid, stamp)
    if (current.status === 'closed' && pushes.length === 0) {
      return {project: current, closed_quotas: [], already_closed: true, deliveries: [], partners: partnersOf(row)}
    }
    const project: Project = {...current, status: 'closed', updated_at: stamp}
    await repo.saveProject(trx, {...row, status: 'closed', body: projectBody(project)})
    const deliveries = await enqueue(trx, pid, partnersOf(row), [...pushes, projectPush(project)], now, requestId)
    return {project, closed_quotas: closed, already_closed: false, deliveries, partners: partnersOf(row)}
  })
}

/** A project as medpanel holds it: the wire form of the project and of each quota, plus counts. */
export async function getProject(
  db: Db,
  projectId: string,
): Promise<{project: Project; partners: string[]; quotas: (Record<string, unknown> & {quota_id: string; status: string; completes: number; members: number})[]}> {
  const row = await requireProject(db, projectId)
  const quotas = []
  for (const q of await repo.listQuotas(db, projectId)) {
    quotas.push({
      ...fromJsonText(q.body, z.record(z.string(), z.unknown()), `the stored body of quota ${q.quota_id}`),
      quota_id: q.quota_id,
      status: q.status,
      completes: q.completes,
      members: await repo.countMembers(db, projectId, q.quota_id),
    })
  }
  return {project: projectOf(row), partners: partnersOf(row), quotas}
}

export async function getMembers(db: Db, projectId: string, quotaId: string): Promise<ReturnType<typeof memberJson>[]> {
  return (await repo.listMembers(db, projectId, quotaId)).map((m) => memberJson(m))
}
