import type {Kysely} from 'kysely'

/**
 * Refresh tokens (RFC 6749 §6) and remembered consent.
 *
 * `refresh_tokens` holds one row per refresh token ever issued, by its SHA-256 only. Every token
 * of one authorization shares a `family`: the hash of the authorization code it came from, which
 * is also the access tokens' `code_hash`, so one statement on each table ends a family. A token
 * is used once (`used_at`); its successor keeps the family's absolute end (`family_expires_at`)
 * and gets a new idle end (`expires_at`, never past the absolute one).
 *
 * `consents` is what a member allowed a client: the scopes, so a later request for no more than
 * these skips the consent page. Filled here from the live member tokens of earlier releases,
 * which were how consent was known until now.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('family', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('member_id', 'integer', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('auth_time', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('family_expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute()
  await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family').execute()
  await db.schema.createIndex('refresh_tokens_member_client').on('refresh_tokens').columns(['member_id', 'client_id']).execute()

  await db.schema
    .createTable('consents')
    .addColumn('member_id', 'integer', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pk', ['member_id', 'client_id'])
    .execute()

  const now = new Date().toISOString()
  const live = await db
    .selectFrom('access_tokens')
    .select(['member_id', 'client_id', 'scopes', 'created_at'])
    .where('member_id', 'is not', null)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at')
    .execute()
  const merged = new Map<string, {member_id: number; client_id: string; scopes: Set<string>; created_at: string; updated_at: string}>()
  for (const row of live as {member_id: number; client_id: string; scopes: string; created_at: string}[]) {
    const key = `${row.member_id} ${row.client_id}`
    const consent = merged.get(key) ?? {member_id: row.member_id, client_id: row.client_id, scopes: new Set<string>(), created_at: row.created_at, updated_at: row.created_at}
    // Releases before 0.3 kept scopes comma-separated.
    for (const scope of row.scopes.split(/[ ,]+/).filter(Boolean)) consent.scopes.add(scope)
    consent.updated_at = row.created_at
    merged.set(key, consent)
  }
  for (const consent of merged.values()) {
    await db
      .insertInto('consents')
      .values({...consent, scopes: [...consent.scopes].join(' ')})
      .execute()
  }
}
