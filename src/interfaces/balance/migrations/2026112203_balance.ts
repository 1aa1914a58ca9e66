import type {Kysely} from 'kysely'
import {autoIncrementKey} from '../../../store/dialect.js'
import defaultTypes from '../../../../data/withdrawal-types.json' with {type: 'json'}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('balance_accounts')
    .addColumn('member_id', 'integer', (c) => c.primaryKey().references('members.id').onDelete('cascade'))
    .addColumn('currency', 'text', (c) => c.notNull().defaultTo('USD'))
    .addColumn('available_funds', 'text', (c) => c.notNull().defaultTo('0'))
    .addColumn('preferred_status', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('balance_transactions')
    .addColumn('seq', 'integer', autoIncrementKey(db))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('member_id', 'integer', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('survey_id', 'text')
    .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('withdrawal_id', 'text')
    .addColumn('withdrawal_type', 'text')
    .addColumn('member_details', 'text')
    .addColumn('client_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('balance_transactions_member').on('balance_transactions').columns(['member_id', 'seq']).execute()
  await db.schema.createIndex('balance_transactions_withdrawal').on('balance_transactions').column('withdrawal_id').execute()

  await db.schema
    .createTable('withdrawal_types')
    .addColumn('code', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('fee_amount', 'text')
    .addColumn('fee_currency', 'text')
    .addColumn('minimum_amount', 'text')
    .addColumn('minimum_currency', 'text')
    .addColumn('required_fields', 'text', (c) => c.notNull())
    .addColumn('optional_fields', 'text', (c) => c.notNull())
    .addColumn('countries', 'text')
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()

  await db.schema
    .createTable('withdrawal_restrictions')
    .addColumn('member_id', 'integer', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().references('withdrawal_types.code'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('withdrawal_restrictions_pk', ['member_id', 'type'])
    .execute()

  await db.schema
    .createTable('balance_idempotency')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('balance_idempotency_pk', ['client_id', 'key'])
    .execute()

  // The shipped defaults; operators change them in the table afterwards.
  await db
    .insertInto('withdrawal_types')
    .values(
      defaultTypes.map((t, position) => ({
        code: t.type,
        description: t.description,
        fee_amount: t.fee?.amount ?? null,
        fee_currency: t.fee?.currency ?? null,
        minimum_amount: t.minimum_balance_required?.amount ?? null,
        minimum_currency: t.minimum_balance_required?.currency ?? null,
        required_fields: JSON.stringify(t.required_fields),
        optional_fields: JSON.stringify(t.optional_fields),
        countries: t.countries ? JSON.stringify(t.countries) : null,
        position,
        active: 1,
      })),
    )
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['balance_idempotency', 'withdrawal_restrictions', 'withdrawal_types', 'balance_transactions', 'balance_accounts']) {
    await db.schema.dropTable(table).execute()
  }
}
