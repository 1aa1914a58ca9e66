import {sql, type Kysely} from 'kysely'
import {isPostgres} from '../../../store/dialect.js'
import {countEveryDocument} from '../term-days.js'

/**
 * Interface E's per-day term statistics (see ../term-days.ts): one row per term, kind of
 * document and day, keyed term first so that a term's days over a window are one range of the
 * key. On SQLite the table is WITHOUT ROWID (the key is the table, no second copy of it). Posts
 * and comments already in the store are counted in the same transaction, so an upgraded store's
 * summaries answer exactly what they answered before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('conversation_term_days')
    .addColumn('term', 'text', (c) => c.notNull())
    .addColumn('kind', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('docs', 'integer', (c) => c.notNull())
    .addColumn('matches', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('conversation_term_days_key', ['term', 'kind', 'day'])
    .$call((builder) => (isPostgres(db) ? builder : builder.modifyEnd(sql`without rowid`)))
    .execute()
  await countEveryDocument(db)
}
