import type {Kysely} from 'kysely'

/**
 * Whether a client must push its authorization requests (RFC 9126 §6,
 * require_pushed_authorization_requests): such a client gets no code through a request sent in
 * the browser's address bar, only through one it pushed over its authenticated back channel.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('require_pushed_authorization_requests', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}
