import {type Kysely, sql} from 'kysely'

/**
 * OpenID Connect. `signing_keys` holds the ID-token signing keys, one current key per algorithm:
 * the private half sealed under the store's key like every other secret (store/secrets.ts), the
 * public half as a JWK for jwks_uri. A rotated key keeps being published until `publish_until`,
 * when the last ID token it signed has expired. Codes remember the request's nonce and when the
 * member signed in (auth_time), for the ID token the code buys. Clients get the addresses they
 * may be sent to after a logout, and the algorithm their ID tokens are signed with.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .addColumn('publish_until', 'text')
    .execute()
  // At most one current key per algorithm: two processes making the first key at once cannot both win.
  await sql`create unique index signing_keys_current on signing_keys (alg) where retired_at is null`.execute(db)
  await db.schema.alterTable('authorization_codes').addColumn('nonce', 'text').execute()
  await db.schema.alterTable('authorization_codes').addColumn('auth_time', 'text').execute()
  await db.schema
    .alterTable('clients')
    .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute()
  await db.schema
    .alterTable('clients')
    .addColumn('id_token_alg', 'text', (c) => c.notNull().defaultTo('RS256'))
    .execute()
}
