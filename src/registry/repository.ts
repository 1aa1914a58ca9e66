import type {RegistryDb as Db} from './tables.js'
import {isStoredId} from '../lib/ids.js'
import {normalEmail} from '../lib/email.js'
import {prepared} from '../store/prepared.js'
import {fromJsonText, stringList} from '../store/json.js'
import {grantsSchema} from '../grants/names.js'
import type {Client, ClientRow, ClientUpdate, MemberRow, MemberUpdate, NewClientRow, NewMemberRow} from './tables.js'

const redirectUrisSchema = stringList()

/** The one mapper of a client row: its JSON lists decoded and checked. */
export function clientFromRow(row: ClientRow): Client {
  return {
    ...row,
    redirect_uris: fromJsonText(row.redirect_uris, redirectUrisSchema, `clients.redirect_uris of ${row.id}`),
    grants: fromJsonText(row.grants, grantsSchema, `clients.grants of ${row.id}`),
    post_logout_redirect_uris: fromJsonText(row.post_logout_redirect_uris, redirectUrisSchema, `clients.post_logout_redirect_uris of ${row.id}`),
  }
}

export async function insertClient(db: Db, row: NewClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute()
}

// Every authenticated call of C, D and E reads its client: prepared once (store/prepared.ts).
const clientById = prepared(1, (db: Db, id: string) => db.selectFrom('clients').selectAll().where('id', '=', id))

export async function findClient(db: Db, id: string): Promise<Client | undefined> {
  const row = (await clientById(db, id))[0]
  return row && clientFromRow(row)
}

export async function listClients(db: Db): Promise<Client[]> {
  return (await db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id').execute()).map(clientFromRow)
}

export async function updateClientRow(db: Db, id: string, patch: ClientUpdate): Promise<void> {
  await db.updateTable('clients').set(patch).where('id', '=', id).execute()
}

/** Deletes a client's row (remove-client, once everything that keeps rows for it has let go of them). */
export async function deleteClientRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom('clients').where('id', '=', id).execute()
}

export async function insertMember(db: Db, row: NewMemberRow): Promise<number> {
  const {id} = await db.insertInto('members').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

/**
 * An id no integer column can hold (lib/ids.ts) finds nobody, on every store, without asking it:
 * PostgreSQL would refuse the query as out of range, SQLite would just miss.
 */
export async function findMember(db: Db, id: number): Promise<MemberRow | undefined> {
  if (!isStoredId(id)) return undefined
  return db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findMemberByEmail(db: Db, email: string): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where('email', '=', normalEmail(email)).executeTakeFirst()
}

type MemberKey = 'id' | 'npi' | 'me' | 'email'
const memberBy = Object.fromEntries(
  (['id', 'npi', 'me', 'email'] as const).map((column) => [
    column,
    prepared(1, (db: Db, value: string | number) => db.selectFrom('members').selectAll().where(column, '=', value)),
  ]),
) as Record<MemberKey, (db: Db, value: string | number) => Promise<MemberRow[]>>

/** Finds a member by a unique identifier column; used by C's {key}/{id} addressing on every call. */
export async function findMemberBy(db: Db, column: MemberKey, value: string | number): Promise<MemberRow | undefined> {
  // As findMember: an id past the integer column's range finds nobody on either store.
  if (column === 'id' && !isStoredId(Number(value))) return undefined
  return (await memberBy[column](db, value))[0]
}

export async function listMemberRows(db: Db): Promise<MemberRow[]> {
  return db.selectFrom('members').selectAll().orderBy('id').execute()
}

export async function updateMemberRow(db: Db, id: number, patch: MemberUpdate): Promise<void> {
  await db.updateTable('members').set(patch).where('id', '=', id).execute()
}
