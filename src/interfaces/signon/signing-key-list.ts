import {iso} from '../../lib/clock.js'
import {readerOf} from '../../store/db.js'
import type {Db} from '../../store/database.js'

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

/** Every stored signing key, newest first. */
export async function listSigningKeys(db: Db, now: Date): Promise<SigningKeyView[]> {
  const rows = await readerOf(db)
    .selectFrom('signing_keys')
    .select(['kid', 'alg', 'created_at', 'retired_at', 'publish_until'])
    .orderBy('created_at', 'desc')
    .orderBy('alg')
    .orderBy('kid')
    .execute()
  const at = iso(now)
  // Of an algorithm's keys that have not stopped signing, the oldest signs (signing-keys.ts).
  const signing = new Map<string, string>()
  for (const row of [...rows].reverse()) {
    if ((row.retired_at === null || row.retired_at > at) && !signing.has(row.alg)) signing.set(row.alg, row.kid)
  }
  const status = (row: (typeof rows)[number]): SigningKeyStatus => {
    if (row.retired_at === null || row.retired_at > at) return signing.get(row.alg) === row.kid ? 'current' : 'next'
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
