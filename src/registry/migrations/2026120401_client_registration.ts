import type {Kysely} from 'kysely'

/**
 * Dynamic client registration (RFC 7591, RFC 7592): the initial access tokens an operator issues,
 * and the registration access token of each client registered with one. Only SHA-256 digests are
 * kept. A store without either table had no registration: both start empty, so it stays off.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('registration_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text')
    .addColumn('uses_left', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('client_registrations')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('access_token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('client_registrations').execute()
  await db.schema.dropTable('registration_tokens').execute()
}
