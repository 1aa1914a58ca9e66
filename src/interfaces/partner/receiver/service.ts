import type {Kysely} from 'kysely'
import {AppError, notFound} from '../../../errors.js'
import {parseInput} from '../../../lib/validate.js'
import {eventSchema, memberListSchema, memberSchema, projectSchema, quotaSchema} from '../schema.js'
import {receiverTransaction} from './store.js'
import type {ReceiverDatabase} from './tables.js'

type RDb = Kysely<ReceiverDatabase>

/**
 * The reference partner's behaviour: validate what arrives with the spec's schemas, keep it as
 * received, and give it back on GET. A write whose X-Medpanel-Delivery id was already applied is
 * acknowledged without applying it again.
 */

function mismatch(field: string, inBody: unknown, inPath: string): AppError {
  return new AppError('bad_request', `${field}: body says "${String(inBody)}" but the path says "${inPath}"`)
}

/** Runs a write once per delivery id (writes without an id always run). */
async function once<T>(db: RDb, deliveryId: string | undefined, now: string, fn: (trx: RDb) => Promise<T>): Promise<T | {duplicate: true}> {
  return receiverTransaction(db, async (trx) => {
    if (deliveryId) {
      const seen = await trx.selectFrom('seen_deliveries').select('delivery_id').where('delivery_id', '=', deliveryId).executeTakeFirst()
      if (seen) return {duplicate: true as const}
      await trx.insertInto('seen_deliveries').values({delivery_id: deliveryId, received_at: now}).execute()
    }
    return fn(trx)
  })
}

async function requireProject(db: RDb, p: string): Promise<void> {
  const row = await db.selectFrom('received_projects').select('project_id').where('project_id', '=', p).executeTakeFirst()
  if (!row) throw notFound(`no project "${p}"`)
}

async function requireQuota(db: RDb, p: string, q: string): Promise<void> {
  const row = await db.selectFrom('received_quotas').select('quota_id').where('project_id', '=', p).where('quota_id', '=', q).executeTakeFirst()
  if (!row) throw notFound(`no quota "${q}" in project "${p}"`)
}

export async function getProject(db: RDb, p: string): Promise<unknown> {
  const row = await db.selectFrom('received_projects').select('body').where('project_id', '=', p).executeTakeFirst()
  if (!row) throw notFound(`no project "${p}"`)
  return JSON.parse(row.body)
}

export async function putProject(db: RDb, p: string, body: unknown, deliveryId: string | undefined, now: string): Promise<unknown> {
  const project = parseInput(projectSchema, body)
  if (project.project_id !== p) throw mismatch('project_id', project.project_id, p)
  const text = JSON.stringify(body)
  return once(db, deliveryId, now, async (trx) => {
    await trx
      .insertInto('received_projects')
      .values({project_id: p, body: text, updated_at: now})
      .onConflict((oc) => oc.column('project_id').doUpdateSet({body: text, updated_at: now}))
      .execute()
    return body
  })
}

export async function listQuotas(db: RDb, p: string): Promise<unknown[]> {
  await requireProject(db, p)
  const rows = await db.selectFrom('received_quotas').select('body').where('project_id', '=', p).orderBy('quota_id').execute()
  return rows.map((r) => JSON.parse(r.body))
}

export async function getQuota(db: RDb, p: string, q: string): Promise<unknown> {
  const row = await db.selectFrom('received_quotas').select('body').where('project_id', '=', p).where('quota_id', '=', q).executeTakeFirst()
  if (!row) throw notFound(`no quota "${q}" in project "${p}"`)
  return JSON.parse(row.body)
}

export async function putQuota(db: RDb, p: string, q: string, body: unknown, deliveryId: string | undefined, now: string): Promise<unknown> {
  const quota = parseInput(quotaSchema, body)
  if (quota.project_id !== p) throw mismatch('project_id', quota.project_id, p)
  if (quota.quota_id !== q) throw mismatch('quota_id', quota.quota_id, q)
  const text = JSON.stringify(body)
  return once(db, deliveryId, now, async (trx) => {
    await requireProject(trx, p)
    await trx
      .insertInto('received_quotas')
      .values({project_id: p, quota_id: q, body: text, updated_at: now})
      .onConflict((oc) => oc.columns(['project_id', 'quota_id']).doUpdateSet({body: text, updated_at: now}))
      .execute()
    return body
  })
}

export async function listMembers(db: RDb, p: string, q: string): Promise<unknown[]> {
  await requireQuota(db, p, q)
  const rows = await db.selectFrom('received_members').select('body').where('project_id', '=', p).where('quota_id', '=', q).orderBy('position').execute()
  return rows.map((r) => JSON.parse(r.body))
}

export async function getMember(db: RDb, p: string, q: string, npi: string): Promise<unknown> {
  const row = await db.selectFrom('received_members').select('body').where('project_id', '=', p).where('quota_id', '=', q).where('npi', '=', npi).executeTakeFirst()
  if (!row) throw notFound(`no member ${npi} in quota "${q}"`)
  return JSON.parse(row.body)
}

/** PUT replaces the list; POST appends (a member already on the list is replaced in place). */
export async function writeMembers(db: RDb, p: string, q: string, body: unknown, mode: 'replace' | 'append', deliveryId: string | undefined, now: string): Promise<unknown> {
  parseInput(memberListSchema, body)
  const members = body as {npi: string}[]
  return once(db, deliveryId, now, async (trx) => {
    await requireQuota(trx, p, q)
    let position = 0
    if (mode === 'replace') {
      await trx.deleteFrom('received_members').where('project_id', '=', p).where('quota_id', '=', q).execute()
    } else {
      const row = await trx
        .selectFrom('received_members')
        .select((eb) => eb.fn.max('position').as('max'))
        .where('project_id', '=', p)
        .where('quota_id', '=', q)
        .executeTakeFirst()
      position = Number(row?.max ?? 0)
    }
    const rows = members.map((m) => ({project_id: p, quota_id: q, npi: m.npi, body: JSON.stringify(m), position: ++position}))
    for (let i = 0; i < rows.length; i += 500) {
      await trx
        .insertInto('received_members')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['project_id', 'quota_id', 'npi']).doUpdateSet((eb) => ({body: eb.ref('excluded.body')})))
        .execute()
    }
    const count = await trx
      .selectFrom('received_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', p)
      .where('quota_id', '=', q)
      .executeTakeFirst()
    return {received: members.length, count: Number(count?.n ?? 0)}
  })
}

export async function putMember(db: RDb, p: string, q: string, npi: string, body: unknown, deliveryId: string | undefined, now: string): Promise<unknown> {
  const member = parseInput(memberSchema, body)
  if (member.npi !== npi) throw mismatch('npi', member.npi, npi)
  const text = JSON.stringify(body)
  return once(db, deliveryId, now, async (trx) => {
    await requireQuota(trx, p, q)
    const existing = await trx.selectFrom('received_members').select('position').where('project_id', '=', p).where('quota_id', '=', q).where('npi', '=', npi).executeTakeFirst()
    if (existing) {
      await trx.updateTable('received_members').set({body: text}).where('project_id', '=', p).where('quota_id', '=', q).where('npi', '=', npi).execute()
    } else {
      const row = await trx
        .selectFrom('received_members')
        .select((eb) => eb.fn.max('position').as('max'))
        .where('project_id', '=', p)
        .where('quota_id', '=', q)
        .executeTakeFirst()
      await trx
        .insertInto('received_members')
        .values({project_id: p, quota_id: q, npi, body: text, position: Number(row?.max ?? 0) + 1})
        .execute()
    }
    return body
  })
}

export async function deleteMember(db: RDb, p: string, q: string, npi: string, deliveryId: string | undefined, now: string): Promise<unknown> {
  return once(db, deliveryId, now, async (trx) => {
    const result = await trx.deleteFrom('received_members').where('project_id', '=', p).where('quota_id', '=', q).where('npi', '=', npi).executeTakeFirst()
    if (result.numDeletedRows === 0n) throw notFound(`no member ${npi} in quota "${q}"`)
    return {deleted: npi}
  })
}

export async function postEvent(db: RDb, p: string, body: unknown, deliveryId: string | undefined, now: string): Promise<unknown> {
  const event = parseInput(eventSchema, body)
  if (event.project_id !== p) throw mismatch('project_id', event.project_id, p)
  const text = JSON.stringify(body)
  return once(db, deliveryId, now, async (trx) => {
    await requireProject(trx, p)
    await trx
      .insertInto('received_events')
      .values({project_id: p, body: text, delivery_id: deliveryId ?? null, received_at: now})
      .execute()
    return body
  })
}

export async function listEvents(db: RDb, p: string): Promise<unknown[]> {
  await requireProject(db, p)
  const rows = await db.selectFrom('received_events').select('body').where('project_id', '=', p).orderBy('id').execute()
  return rows.map((r) => JSON.parse(r.body))
}
