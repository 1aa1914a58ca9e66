import type {Kysely} from 'kysely'

/**
 * The form of a client's access tokens: `opaque` (a random string the service looks up, as every
 * client had before) or `jwt` (RFC 9068, signed with the ID-token keys, which a resource server
 * can check on its own against jwks_uri). Every client registered earlier keeps opaque tokens.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('access_token_format', 'text', (c) => c.notNull().defaultTo('opaque'))
    .execute()
}
