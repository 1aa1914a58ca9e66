import type {Kysely} from 'kysely'

/**
 * The resource an authorization request named (RFC 8707 §2.1): the audience of the JWT access
 * token its code is exchanged for, unless the token request names one itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_codes').addColumn('resource', 'text').execute()
}
