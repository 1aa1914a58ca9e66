import * as grants from '../../grants/repository.js'
import {narrow} from '../../store/database.js'
import {iso} from '../../lib/clock.js'
import type {SignonDb as Db} from './tables.js'
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

/** What a request asks of a member: a client, and scopes. */
export interface ConsentRequest {
  client: {id: string}
  scopes: string[]
}

/**
 * The scopes of a request the member has not allowed this client yet: none when a remembered
 * consent (or, for stores of earlier releases and operators' tokens, a live token) covers them
 * all. What lets a sign-in skip the consent page, and prompt=none answer with a code.
 */
export async function scopesNotYetAllowed(db: Db, memberId: number, checked: ConsentRequest, now: Date): Promise<string[]> {
  const consent = await grants.findConsent(narrow(db), memberId, checked.client.id)
  const remembered = new Set(consent?.scopes.split(' ') ?? [])
  const missing = checked.scopes.filter((scope) => !remembered.has(scope))
  if (missing.length === 0) return missing
  const live = (await grants.authorizedApplications(narrow(db), memberId, iso(now))).find((a) => a.client_id === checked.client.id)
  const held = new Set(live?.scopes.split(/[ ,]+/) ?? [])
  return missing.filter((scope) => !held.has(scope))
}

/** Whether the member already allowed this client everything the request asks. */
export async function alreadyAllowed(db: Db, memberId: number, checked: ConsentRequest, now: Date): Promise<boolean> {
  return (await scopesNotYetAllowed(db, memberId, checked, now)).length === 0
}

/**
 * The applications a member allowed and can take back (the authorized-applications page): those
 * with a live access or refresh token, and those whose consent is remembered.
 */
export async function authorizedApplications(db: Db, memberId: number, now: Date): Promise<AuthorizedApplication[]> {
  const stamp = iso(now)
  const rows = await grants.authorizedApplications(narrow(db), memberId, stamp)
  const byClient = new Map(rows.map((row) => [row.client_id, {...row, scopes: new Set(row.scopes.split(/[ ,]+/).filter(Boolean))}]))
  const extra = [...(await grants.liveRefreshGrants(narrow(db), memberId, stamp)), ...(await grants.memberConsents(narrow(db), memberId))]
  for (const grant of extra) {
    const known = byClient.get(grant.client_id)
    if (known) {
      for (const scope of grant.scopes.split(' ').filter(Boolean)) known.scopes.add(scope)
      if (grant.created_at < known.since) known.since = grant.created_at
      continue
    }
    const client = await repo.applicationClient(db, grant.client_id)
    if (client) byClient.set(grant.client_id, {...client, scopes: new Set(grant.scopes.split(' ').filter(Boolean)), since: grant.created_at, last_used_at: null})
  }
  return [...byClient.values()].map((app) => ({...app, scopes: [...app.scopes]})).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
