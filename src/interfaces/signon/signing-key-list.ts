import {iso} from '../../lib/clock.js'
import type {SignonDb as Db} from './tables.js'

/**
 * The ID-token signing keys a store holds, as an operator sees them (list-signing-keys): never the
 * private half. Kept apart from signing-keys.ts so that listing loads no crypto library.
 */

/**
 * `current`: signs the ID tokens of its algorithm now. `next`: made by a rotation, already in
 * jwks_uri, signs once the current key stops (its retired_at). `published`: retired, still in
 * jwks_uri for the ID tokens it signed. `expired`: retired and out of jwks_uri; the next rotation
 * deletes it.
 */
export type SigningKeyStatus = 'current' | 'next' | 'published' | 'expired'

export interface SigningKeyView {
  kid: string
  alg: string
  status: SigningKeyStatus
  created_at: string
  retired_at: string | null
  published_until: string | null
}

/** Every stored signing key, newest first, read through `reader`. */
export async function listSigningKeys(reader: Db, now: Date): Promise<SigningKeyView[]> {
  const rows = await reader
    .selectFrom('signing_keys')
    .select(['kid', 'alg', 'created_at', 'retired_at', 'publish_until'])
    .orderBy('created_at', 'desc')
    .orderBy('alg')
    .orderBy('kid')
    .execute()
  const at = iso(now)
  // Of an algorithm's keys that have not stopped signing, the one due to stop soonest signs, else
  // the one no rotation touched (the same order as repository.liveSigningKeys).
  const signing = new Map<string, {kid: string; until: string | null}>()
  for (const row of rows) {
    if (!(row.retired_at === null || row.retired_at > at)) continue
    const held = signing.get(row.alg)
    const sooner = held === undefined || (row.retired_at !== null && (held.until === null || row.retired_at < held.until))
    if (sooner) signing.set(row.alg, {kid: row.kid, until: row.retired_at})
  }
  const status = (row: (typeof rows)[number]): SigningKeyStatus => {
    if (row.retired_at === null || row.retired_at > at) return signing.get(row.alg)?.kid === row.kid ? 'current' : 'next'
    // The same test jwks_uri applies (repository.publishedSigningKeys): published while publish_until is still ahead.
    return row.publish_until !== null && row.publish_until > at ? 'published' : 'expired'
  }
  return rows.map((row) => ({
    kid: row.kid,
    alg: row.alg,
    status: status(row),
    created_at: row.created_at,
    retired_at: row.retired_at,
    published_until: row.publish_until,
  }))
}
