import type {Kysely} from 'kysely'

/**
 * An authorization code bound in advance to a DPoP key (RFC 9449 §10): by the `dpop_jkt` parameter
 * of the authorization request, or by the DPoP proof that came with its pushed request. Only a
 * token request with a proof of that key may exchange it, so a code stolen from the redirect is
 * worthless to a thief even before the token exists.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_codes').addColumn('dpop_jkt', 'text').execute()
}
