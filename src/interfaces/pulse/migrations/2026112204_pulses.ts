import {sql, type Kysely} from 'kysely'
import {autoIncrementKey, isPostgres} from '../../../store/dialect.js'

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pulses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('internal_title', 'text', (c) => c.notNull())
    .addColumn('identifier', 'text')
    .addColumn('start_date', 'text')
    .addColumn('end_date', 'text')
    .addColumn('fielding_time', 'text', (c) => c.notNull())
    .addColumn('external_introduction', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_updated', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    // Pulses list in insertion order, which SQLite keeps as the table's rowid; PostgreSQL gets a
    // column of that name so the same queries order the same way.
    .$call((table) => (isPostgres(db) ? table.addColumn('rowid', 'integer', (c) => c.notNull().generatedByDefaultAsIdentity()) : table))
    .execute()
  await db.schema.createIndex('pulses_client').on('pulses').columns(['client_id', 'created_at']).execute()

  await db.schema
    .createTable('pulse_questions')
    .addColumn('id', 'integer', autoIncrementKey(db))
    .addColumn('pulse_id', 'text', (c) => c.notNull().references('pulses.id').onDelete('cascade'))
    .addColumn('grid_id', 'integer', (c) => c.references('pulse_questions.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('is_screener', 'integer', (c) => c.notNull())
    .addColumn('choices', 'text', (c) => c.notNull())
    .addColumn('parent_code', 'text')
    .addColumn('other_available', 'integer', (c) => c.notNull())
    .addColumn('display_unit', 'text')
    .addColumn('fixed_sum_total', 'integer')
    .addColumn('answers_required', 'integer', (c) => c.notNull())
    .addColumn('freetext_labels', 'text')
    .addColumn('has_rows', 'integer', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('pulse_questions_code').on('pulse_questions').columns(['pulse_id', 'code']).unique().execute()
  await db.schema.createIndex('pulse_questions_grid').on('pulse_questions').column('grid_id').execute()

  await db.schema
    .createTable('pulse_respondents')
    .addColumn('seq', 'integer', autoIncrementKey(db))
    .addColumn('pulse_id', 'text', (c) => c.notNull().references('pulses.id').onDelete('cascade'))
    .addColumn('respondent_id', 'text', (c) => c.notNull())
    .addColumn('sermo_id', 'integer')
    .addColumn('survey_status', 'text', (c) => c.notNull())
    .addColumn('first_interaction', 'text', (c) => c.notNull())
    .addColumn('last_interaction', 'text', (c) => c.notNull())
    // The respondent's export object, rendered from the rows below when they are written (a read
    // model for the export; null means "render it on the fly").
    .addColumn('export_json', 'text')
    .execute()
  await db.schema.createIndex('pulse_respondents_id').on('pulse_respondents').columns(['pulse_id', 'respondent_id']).unique().execute()
  // Keyset pages of one pulse: WHERE pulse_id = ? AND seq > ? ORDER BY seq.
  await db.schema.createIndex('pulse_respondents_page').on('pulse_respondents').columns(['pulse_id', 'seq']).execute()

  // Keyed by (respondent, position) and stored WITHOUT ROWID, so one respondent's rows sit together
  // on disk and a page of respondents is one range scan.
  await db.schema
    .createTable('pulse_profile_entries')
    .addColumn('respondent_seq', 'integer', (c) => c.notNull().references('pulse_respondents.seq').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('pulse_profile_entries_pk', ['respondent_seq', 'position'])
    .modifyEnd(isPostgres(db) ? sql`` : sql`without rowid`)
    .execute()

  await db.schema
    .createTable('pulse_answers')
    .addColumn('respondent_seq', 'integer', (c) => c.notNull().references('pulse_respondents.seq').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('question_code', 'text', (c) => c.notNull())
    .addColumn('answer_values', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('pulse_answers_pk', ['respondent_seq', 'position'])
    .modifyEnd(isPostgres(db) ? sql`` : sql`without rowid`)
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['pulse_answers', 'pulse_profile_entries', 'pulse_respondents', 'pulse_questions', 'pulses']) {
    await db.schema.dropTable(table).execute()
  }
}
