import type {Kysely} from 'kysely'
import {autoIncrementKey} from '../../../store/dialect.js'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('partner_projects')
    .addColumn('project_id', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('partner_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute()

  await db.schema
    .createTable('partner_quotas')
    .addColumn('project_id', 'text', (c) => c.notNull().references('partner_projects.project_id').onDelete('cascade'))
    .addColumn('quota_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('limit_count', 'integer', (c) => c.notNull())
    .addColumn('completes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('body', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('partner_quotas_pk', ['project_id', 'quota_id'])
    .execute()

  await db.schema
    .createTable('partner_quota_members')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('quota_id', 'text', (c) => c.notNull())
    .addColumn('npi', 'text', (c) => c.notNull())
    .addColumn('honoraria', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('partner_quota_members_pk', ['project_id', 'quota_id', 'npi'])
    .addForeignKeyConstraint('partner_quota_members_quota', ['project_id', 'quota_id'], 'partner_quotas', ['project_id', 'quota_id'], (fk) => fk.onDelete('cascade'))
    .execute()
  await db.schema.createIndex('partner_quota_members_order').on('partner_quota_members').columns(['project_id', 'quota_id', 'position']).execute()

  await db.schema
    .createTable('partner_events')
    .addColumn('id', 'integer', autoIncrementKey(db))
    .addColumn('project_id', 'text', (c) => c.notNull().references('partner_projects.project_id').onDelete('cascade'))
    .addColumn('quota_id', 'text')
    .addColumn('npi', 'text', (c) => c.notNull())
    .addColumn('reported_state', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('event_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('partner_events_quota').on('partner_events').columns(['project_id', 'quota_id', 'state', 'npi']).execute()

  await db.schema
    .createTable('partner_deliveries')
    .addColumn('seq', 'integer', autoIncrementKey(db))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('quota_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('first_attempt_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createTable('partner_delivery_bodies')
    .addColumn('seq', 'integer', (c) => c.primaryKey().references('partner_deliveries.seq').onDelete('cascade'))
    .addColumn('body', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('partner_deliveries_queue').on('partner_deliveries').columns(['status', 'next_attempt_at']).execute()
  await db.schema.createIndex('partner_deliveries_fifo').on('partner_deliveries').columns(['client_id', 'project_id', 'status', 'seq']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['partner_delivery_bodies', 'partner_deliveries', 'partner_events', 'partner_quota_members', 'partner_quotas', 'partner_projects']) {
    await db.schema.dropTable(table).execute()
  }
}
