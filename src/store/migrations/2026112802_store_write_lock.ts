import type {Kysely} from 'kysely'

/**
 * An empty table that only serves as a lock: on PostgreSQL every batch of the group writer opens
 * with LOCK TABLE on it (postgres/writer.ts), so batches of every process commit one at a time, as
 * SQLite's BEGIN IMMEDIATE makes them. A table lock, unlike an advisory lock taken with a SELECT,
 * is acquired before a SERIALIZABLE transaction takes its snapshot. SQLite gets the table too, so
 * both kinds of store have the same tables (copy-store), but never uses it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('store_write_lock')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .execute()
}
