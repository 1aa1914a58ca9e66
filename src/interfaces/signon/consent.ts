import {iso} from '../../lib/clock.js'
import type {Db} from '../../store/database.js'
import type {CheckedAuthorizeRequest} from './authorize.js'
import * as repo from './repository.js'

export interface AuthorizedApplication {
  client_id: string
  name: string
  url: string
  logo_url: string
  scopes: string[]
  since: string
  last_used_at: string | null
}

/**
 * Whether the member already allowed this client everything the request asks (a live token with
 * those scopes): what lets prompt=none answer with a code and no page.
 */
export async function alreadyAllowed(db: Db, memberId: number, checked: CheckedAuthorizeRequest, now: Date): Promise<boolean> {
  const allowed = (await authorizedApplications(db, memberId, now)).find((a) => a.client_id === checked.client.id)
  return allowed !== undefined && checked.scopes.every((scope) => allowed.scopes.includes(scope))
}

/** The applications a member allowed and can take back (the authorized-applications page). */
export async function authorizedApplications(db: Db, memberId: number, now: Date): Promise<AuthorizedApplication[]> {
  const rows = await repo.authorizedApplications(db, memberId, iso(now))
  return rows.map((row) => ({...row, scopes: [...new Set(row.scopes.split(/[ ,]+/).filter(Boolean))]}))
}
