import type {Kysely} from 'kysely'

/**
 * Whether a client must prove possession of a key for every token (RFC 9449 §5.2,
 * dpop_bound_access_tokens): such a client gets no bearer token, only DPoP-bound ones.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('dpop_bound_access_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
}
