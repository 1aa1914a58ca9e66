import type {Kysely, Migration} from 'kysely'
import {openStore, type Store} from '../../../store/db.js'
import {writeTransaction} from '../../../store/transactions.js'
import type {Schema} from '../../../store/migrate.js'
import type {ReceiverDatabase} from './tables.js'

/**
 * The reference partner keeps its own SQLite file (`partner-serve --db`), apart from medpanel's
 * store: it plays another company's system, so it shares no tables with the service that pushes
 * to it. Its schema has its own migration list.
 */
const migrations: Record<string, Migration> = {
  '2026112202_received': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('received_projects')
        .addColumn('project_id', 'text', (c) => c.primaryKey())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('received_quotas')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('quota_id', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('received_quotas_pk', ['project_id', 'quota_id'])
        .execute()
      await db.schema
        .createTable('received_members')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('quota_id', 'text', (c) => c.notNull())
        .addColumn('npi', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('received_members_pk', ['project_id', 'quota_id', 'npi'])
        .execute()
      await db.schema.createIndex('received_members_order').on('received_members').columns(['project_id', 'quota_id', 'position']).execute()
      await db.schema
        .createTable('received_events')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('delivery_id', 'text')
        .addColumn('received_at', 'text', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('seen_deliveries')
        .addColumn('delivery_id', 'text', (c) => c.primaryKey())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .execute()
    },
    async down(db: Kysely<unknown>) {
      for (const table of ['seen_deliveries', 'received_events', 'received_members', 'received_quotas', 'received_projects']) await db.schema.dropTable(table).execute()
    },
  },
  '2026112501_request_log': {
    // Every write request as it arrived, resends included: what a test of "exactly once, in
    // order" reads back (seen_deliveries keeps only the first of each id).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('received_requests')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('delivery_id', 'text')
        .addColumn('received_at', 'text', (c) => c.notNull())
        .execute()
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('received_requests').execute()
    },
  },
}

export type ReceiverStore = Store<ReceiverDatabase>

const RECEIVER_SCHEMA: Schema = {migrations, migrationTableName: 'partner_migrations'}

export async function openReceiverStore(file: string): Promise<ReceiverStore> {
  return openStore<ReceiverDatabase>({file}, RECEIVER_SCHEMA)
}

/** BEGIN IMMEDIATE, as in medpanel's own store: one writer at a time. */
export function receiverTransaction<T>(db: Kysely<ReceiverDatabase>, fn: (trx: Kysely<ReceiverDatabase>) => Promise<T>): Promise<T> {
  return writeTransaction(db, fn)
}
