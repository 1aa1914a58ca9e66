import type {Kysely} from 'kysely'

/**
 * DPoP (RFC 9449): a token bound to the key of the proof it was issued with carries that key's
 * thumbprint (`cnf.jkt`), and every later presentation must prove possession of the same key.
 * An access token is bound when it was asked for with a proof; a refresh token when its client
 * is public (a confidential client proves itself at each refresh instead).
 *
 * `dpop_proofs` holds the `jti` of every proof accepted, keyed by the proof's key, until the
 * proof is too old to be accepted anyway: the primary key is the replay check, so it holds for
 * every `serve` on the store.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('access_tokens').addColumn('dpop_jkt', 'text').execute()
  await db.schema.alterTable('refresh_tokens').addColumn('dpop_jkt', 'text').execute()
  await db.schema
    .createTable('dpop_proofs')
    .addColumn('jkt', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('dpop_proofs_key', ['jkt', 'jti'])
    .execute()
  await db.schema.createIndex('dpop_proofs_expiry').on('dpop_proofs').column('expires_at').execute()
}
