import type {Kysely} from 'kysely'

/**
 * Failed authentication attempts, per account and per client address, kept in the store so a
 * lock holds across restarts and across every serve process on the store.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('auth_failures')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_failure_at', 'text', (c) => c.notNull())
    .execute()
}
