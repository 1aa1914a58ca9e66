import type {Kysely} from 'kysely'
import {autoIncrementKey} from '../../store/dialect.js'

/**
 * The operators' audit trail: one row for every command that changed the store (who, when, which
 * target, the fields set, never a secret). A store from an earlier release gets the table empty:
 * what was done before it is not known.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('operator_audit')
    .addColumn('id', 'integer', autoIncrementKey(db))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('os_user', 'text', (c) => c.notNull())
    .addColumn('command', 'text', (c) => c.notNull())
    .addColumn('target_kind', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('operator_audit_at').on('operator_audit').column('at').execute()
  await db.schema.createIndex('operator_audit_target').on('operator_audit').columns(['target', 'at']).execute()
}
