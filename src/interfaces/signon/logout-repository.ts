import type {Insertable} from 'kysely'
import type {SignonDb as Db} from './tables.js'
import type {LogoutDeliveryRow, LogoutDeliveryTable} from './tables.js'

/** The back-channel logout outbox (logout_deliveries): what the logout worker reads and writes. */

export async function insertDeliveries(db: Db, rows: Insertable<LogoutDeliveryTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('logout_deliveries').values(rows).execute()
}

/** Pending deliveries due by `now` that no live lease holds, oldest first. */
export async function dueDeliveries(db: Db, now: string, limit: number): Promise<LogoutDeliveryRow[]> {
  return db
    .selectFrom('logout_deliveries')
    .selectAll()
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .execute()
}

/** Leases a due delivery to `owner`; false when another worker took it first. */
export async function lease(db: Db, id: string, owner: string, until: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('logout_deliveries')
    .set({lease_owner: owner, lease_until: until})
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst()
  return result.numUpdatedRows === 1n
}

export async function updateDelivery(db: Db, id: string, change: Partial<Omit<LogoutDeliveryRow, 'id'>>): Promise<void> {
  await db.updateTable('logout_deliveries').set(change).where('id', '=', id).execute()
}

/** Deliveries of a session, as tests and operators read them. */
export async function listDeliveries(db: Db, filter: {sid?: string; clientId?: string} = {}): Promise<LogoutDeliveryRow[]> {
  let query = db.selectFrom('logout_deliveries').selectAll().orderBy('created_at').orderBy('id')
  if (filter.sid !== undefined) query = query.where('sid', '=', filter.sid)
  if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId)
  return query.execute()
}

/** Drops deliveries sent or given up before `before`. */
export async function deleteFinished(db: Db, before: string): Promise<void> {
  await db.deleteFrom('logout_deliveries').where('status', '!=', 'pending').where('updated_at', '<', before).execute()
}

/** Pending deliveries that some worker leased (for the dead-lease release). */
export async function leasedRows(db: Db): Promise<Pick<LogoutDeliveryRow, 'id' | 'lease_owner'>[]> {
  return db.selectFrom('logout_deliveries').select(['id', 'lease_owner']).where('status', '=', 'pending').where('lease_owner', 'is not', null).execute()
}

export async function releaseLeases(db: Db, ids: string[]): Promise<void> {
  if (ids.length) await db.updateTable('logout_deliveries').set({lease_owner: null, lease_until: null}).where('id', 'in', ids).execute()
}
