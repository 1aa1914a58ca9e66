import type {Kysely} from 'kysely'

/**
 * When a token was last presented (to token info, member info or an export), kept to the nearest
 * ten minutes: members see it beside each application they allowed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('access_tokens').addColumn('last_used_at', 'text').execute()
}
