import type {Kysely} from 'kysely'

/**
 * OpenID Connect Back-Channel Logout 1.0: where a client hears that a member's sign-in session
 * ended (a logout token posted to it), and whether it asked for the session's `sid` in it.
 * Existing clients get neither: they are told of no logouts until an operator sets the URI.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('backchannel_logout_uri', 'text').execute()
  await db.schema
    .alterTable('clients')
    .addColumn('backchannel_logout_session_required', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}
