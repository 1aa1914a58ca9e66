import type {Kysely} from 'kysely'

/**
 * Consent-page sign-in sessions kept on the server, so signing out ends a session everywhere a
 * copy of its cookie went, and each sign-in starts a fresh one. The cookie carries a random id;
 * only its SHA-256 is stored, so reading the database does not yield a usable session. Ending a
 * session also moves its expiry to that moment, so one index on expires_at finds every row that
 * can go (the sweep at sign-in).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signin_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('member_id', 'integer', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ended_at', 'text')
    .execute()
  await db.schema.createIndex('signin_sessions_expiry').on('signin_sessions').column('expires_at').execute()
  // For the cascade when a member row is deleted.
  await db.schema.createIndex('signin_sessions_member').on('signin_sessions').column('member_id').execute()
}
