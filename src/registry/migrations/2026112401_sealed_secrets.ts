import {sql, type Kysely} from 'kysely'
import type {MigrationContext} from '../../store/migration-types.js'
import {isSealed, seal} from '../../store/secrets.js'

/**
 * Partner passwords and signing secrets were kept in the clear, and the sign-in cookie's signing
 * secret in the settings table, so anyone who could read the database file could call partners
 * as medpanel or forge a member's sign-in. This seals the first two under the store's key (kept
 * outside the database) in the same transaction as the migration, and drops the cookie secret:
 * it is derived from that key from now on.
 */
export async function up(db: Kysely<any>, {keyring}: MigrationContext): Promise<void> {
  const rows = await sql<{id: string; partner_password: string | null; signing_secret: string | null}>`
    select id, partner_password, signing_secret from clients where partner_password is not null or signing_secret is not null`.execute(db)
  for (const row of rows.rows) {
    const sealIfPlain = (value: string | null) => (value === null || isSealed(value) ? value : seal(keyring, value))
    await sql`update clients set partner_password = ${sealIfPlain(row.partner_password)}, signing_secret = ${sealIfPlain(row.signing_secret)} where id = ${row.id}`.execute(db)
  }
  await sql`delete from settings where key = 'cookie_secret'`.execute(db)
}
