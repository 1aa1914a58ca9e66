import type {Db} from '../store/database.js'
import {memberView, type MemberView} from '../registry/views.js'

/*
 * Paged lists for the operator commands. Kept apart from queries.ts so that list-members starts
 * without loading the interfaces' modules (and zod) it does not use. Paged in SQL: a store may
 * hold tens of thousands of members, and a command must not read them all to print a hundred.
 */

export interface Page<T> {
  rows: T[]
  /** Rows matching the filter, on every page. */
  total: number
}

export interface PageAsk {
  limit: number
  offset: number
}

export async function pageMembers(db: Db, ask: PageAsk & {active?: boolean; since?: string}): Promise<Page<MemberView>> {
  let query = db.selectFrom('members')
  if (ask.active !== undefined) query = query.where('active', '=', ask.active ? 1 : 0)
  if (ask.since !== undefined) query = query.where('created_at', '>=', ask.since)
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id').limit(ask.limit).offset(ask.offset).execute(),
    query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return {rows: rows.map(memberView), total: Number(count.n)}
}
