import type {Kysely} from 'kysely'

/**
 * The public keys of a client that authenticates with private_key_jwt (RFC 7523 §2.2): a JWK Set
 * kept as the operator gave it (`jwks`, JSON text), or the URL the client publishes its set at
 * (`jwks_uri`). One of the two for such a client, neither for any other; no secret is kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('jwks', 'text').execute()
  await db.schema.alterTable('clients').addColumn('jwks_uri', 'text').execute()
}
