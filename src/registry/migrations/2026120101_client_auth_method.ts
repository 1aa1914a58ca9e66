import type {Kysely} from 'kysely'

/**
 * How each client proves itself at the token endpoint (RFC 7591's token_endpoint_auth_method):
 * `client_secret_basic` for every client registered before (they keep working unchanged, the
 * secret in the Basic header or the form), or `none` for a public client (a browser or native
 * app), which holds no secret and must use PKCE.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('token_endpoint_auth_method', 'text', (c) => c.notNull().defaultTo('client_secret_basic'))
    .execute()
}
