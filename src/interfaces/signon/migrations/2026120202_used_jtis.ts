import type {Kysely} from 'kysely'

/**
 * The `jti` of every signed proof a client presented (a private_key_jwt client assertion), kept
 * until the proof itself expires, so none is accepted twice, by any `serve` on the store. The
 * primary key is the check: a second insert of the same (purpose, client, jti) fails. Expired rows
 * go in a sweep now and then, found by the index on expires_at.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('used_jtis')
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('used_jtis_key', ['purpose', 'client_id', 'jti'])
    .execute()
  await db.schema.createIndex('used_jtis_expiry').on('used_jtis').column('expires_at').execute()
}
