import {sql} from 'kysely'
import {normalEmail} from '../lib/email.js'
import type {Page, PageAsk} from '../lib/page.js'
import type {RegistryDb as Db} from './tables.js'
import {memberView, type MemberView} from './views.js'

/*
 * The members, a page at a time, for list-members. Kept apart from the registry's validating
 * service so that the command starts without loading zod. Paged in SQL: a store may hold tens of
 * thousands of members, and a command must not read them all to print a hundred.
 */

/** Filters of list-members: exact e-mail (any case) or NPI, or a name's beginning (first, last or both, any case). */
export interface MemberFilter {
  active?: boolean
  since?: string
  email?: string
  npi?: string
  name?: string
}

export async function pageMembers(db: Db, ask: PageAsk & MemberFilter): Promise<Page<MemberView>> {
  let query = db.selectFrom('members')
  if (ask.active !== undefined) query = query.where('active', '=', ask.active ? 1 : 0)
  if (ask.since !== undefined) query = query.where('created_at', '>=', ask.since)
  if (ask.email !== undefined) query = query.where('email', '=', normalEmail(ask.email))
  if (ask.npi !== undefined) query = query.where('npi', '=', ask.npi.trim())
  if (ask.name !== undefined) {
    // LIKE with its wildcards escaped, on lower-cased text: the same on SQLite and PostgreSQL.
    const prefix = `${ask.name
      .trim()
      .toLowerCase()
      .replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    query = query.where(
      (eb) =>
        sql<boolean>`(lower(${eb.ref('first_name')}) like ${prefix} escape '\\' or lower(${eb.ref('last_name')}) like ${prefix} escape '\\' or lower(${eb.ref('first_name')} || ' ' || ${eb.ref('last_name')}) like ${prefix} escape '\\')`,
    )
  }
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows: rows.map(memberView), total: Number(count.n)}
}
