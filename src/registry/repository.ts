import type {Db} from '../store/database.js'
import type {ClientRow, ClientUpdate, MemberRow, MemberUpdate, NewClientRow, NewMemberRow} from './tables.js'

export async function insertClient(db: Db, row: NewClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute()
}

export async function findClient(db: Db, id: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function listClientRows(db: Db): Promise<ClientRow[]> {
  return db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id').execute()
}

export async function updateClientRow(db: Db, id: string, patch: ClientUpdate): Promise<void> {
  await db.updateTable('clients').set(patch).where('id', '=', id).execute()
}

export async function insertMember(db: Db, row: NewMemberRow): Promise<number> {
  const {id} = await db.insertInto('members').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

export async function findMember(db: Db, id: number): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findMemberByEmail(db: Db, email: string): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where('email', '=', email.trim().toLowerCase()).executeTakeFirst()
}

/** Finds a member by a unique identifier column; used by C's {key}/{id} addressing too. */
export async function findMemberBy(db: Db, column: 'id' | 'npi' | 'me' | 'email', value: string | number): Promise<MemberRow | undefined> {
  return db.selectFrom('members').selectAll().where(column, '=', value).executeTakeFirst()
}

export async function listMemberRows(db: Db): Promise<MemberRow[]> {
  return db.selectFrom('members').selectAll().orderBy('id').execute()
}

export async function updateMemberRow(db: Db, id: number, patch: MemberUpdate): Promise<void> {
  await db.updateTable('members').set(patch).where('id', '=', id).execute()
}
