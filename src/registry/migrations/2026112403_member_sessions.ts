import type {Kysely} from 'kysely'

/**
 * When a member's sign-in sessions were last ended: a consent-page session started before it is
 * void. Set on deactivation and on a password change, so deactivating and reactivating a member
 * within a session's 12 hours no longer brings the old session back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('members').addColumn('sessions_ended_at', 'text').execute()
}
