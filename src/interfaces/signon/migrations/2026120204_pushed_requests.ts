import type {Kysely} from 'kysely'

/**
 * Authorization requests clients pushed (RFC 9126): the parameters as the authenticated client sent
 * them, under the SHA-256 of the random part of the request_uri given back. A request is opened in
 * the browser within a minute (expires_at), then lives while the member signs in and decides, and
 * is spent (used_at) by the answer sent back to the client: a code, or an error.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('pushed_requests')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('opened_at', 'text')
    .addColumn('signed_in_at', 'text')
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('pushed_requests_created').on('pushed_requests').column('created_at').execute()
}
