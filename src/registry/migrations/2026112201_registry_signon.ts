import type {Kysely} from 'kysely'
import {autoIncrementKey} from '../../store/dialect.js'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('logo_url', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('grants', 'text', (c) => c.notNull().defaultTo('["signon"]'))
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('token_ttl', 'integer')
    .addColumn('expired_at', 'text')
    .addColumn('partner_url', 'text')
    .addColumn('partner_username', 'text')
    .addColumn('partner_password', 'text')
    .addColumn('signing_secret', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('members')
    .addColumn('id', 'integer', autoIncrementKey(db))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('specialty', 'text', (c) => c.notNull())
    .addColumn('npi', 'text', (c) => c.unique())
    .addColumn('me', 'text', (c) => c.unique())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('password_changed_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('member_id', 'integer', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('superseded_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('authorization_codes_pair').on('authorization_codes').columns(['member_id', 'client_id']).execute()

  await db.schema
    .createTable('access_tokens')
    .addColumn('id', 'integer', autoIncrementKey(db))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('member_id', 'integer', (c) => c.references('members.id').onDelete('cascade'))
    .addColumn('code_hash', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('access_tokens_member').on('access_tokens').columns(['member_id', 'client_id']).execute()
  await db.schema.createIndex('access_tokens_client').on('access_tokens').column('client_id').execute()
  await db.schema.createIndex('access_tokens_code').on('access_tokens').column('code_hash').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['access_tokens', 'authorization_codes', 'members', 'clients', 'settings']) {
    await db.schema.dropTable(table).execute()
  }
}
