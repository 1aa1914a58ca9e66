import {iso} from '../../lib/clock.js'
import {readerOf} from '../../store/db.js'
import type {Db} from '../../store/database.js'

/**
 * The ID-token signing keys a store holds, as an operator sees them (list-signing-keys): never the
 * private half. Kept apart from signing-keys.ts so that listing loads no crypto library.
 */

/**
 * `current`: signs the ID tokens of its algorithm. `published`: retired, still in jwks_uri for
 * the ID tokens it signed. `expired`: retired and out of jwks_uri; the next rotation deletes it.
 */
export type SigningKeyStatus = 'current' | 'published' | 'expired'

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
  return rows.map((row) => ({
    kid: row.kid,
    alg: row.alg,
    // The same test jwks_uri applies (repository.publishedSigningKeys): published while publish_until is still ahead.
    status: row.retired_at === null ? 'current' : row.publish_until !== null && row.publish_until > at ? 'published' : 'expired',
    created_at: row.created_at,
    retired_at: row.retired_at,
    published_until: row.publish_until,
  }))
}
