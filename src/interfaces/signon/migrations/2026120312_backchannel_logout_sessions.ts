import type {Kysely} from 'kysely'

/**
 * OpenID Connect Back-Channel Logout 1.0. Each sign-in session gets a `sid`, random and public
 * (its id is the cookie's secret and is stored only hashed), which the authorization code and the
 * refresh-token family carry, so every ID token of the session names it. Sessions begun before
 * this migration have none: their ID tokens carry no sid, and they end within a working day.
 * `id_token_sessions` remembers which clients got an ID token in which session, so an ending
 * session knows whom to tell; `logout_deliveries` is the durable outbox of those logout tokens,
 * which the worker in `serve` sends and retries.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signin_sessions').addColumn('sid', 'text').execute()
  // The sweep at each sign-in looks sessions up by sid (records of sessions that are gone).
  await db.schema.createIndex('signin_sessions_sid').on('signin_sessions').column('sid').execute()
  await db.schema.alterTable('authorization_codes').addColumn('sid', 'text').execute()
  await db.schema.alterTable('refresh_tokens').addColumn('sid', 'text').execute()
  await db.schema
    .createTable('id_token_sessions')
    .addColumn('sid', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('member_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('id_token_sessions_key', ['sid', 'client_id'])
    .execute()
  await db.schema
    .createTable('logout_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('member_id', 'integer', (c) => c.notNull())
    .addColumn('sid', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('first_attempt_at', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute()
  // The worker's question: which pending deliveries are due.
  await db.schema.createIndex('logout_deliveries_due').on('logout_deliveries').columns(['status', 'next_attempt_at']).execute()
}
