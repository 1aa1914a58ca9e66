import {type Kysely, sql} from 'kysely'
import {describe, expect, it} from 'vitest'
import {openStore} from '../../src/schema.js'
import {writeLater, writesSettled, writeStats} from '../../src/store/transactions.js'
import {onPostgres, openTestStore, reopenableStore} from '../helpers/store.js'

/*
 * Writes nobody waits for (writeLater, the records of E's summary calls): held a moment, then
 * written together in one transaction, each in a savepoint of its own; written at once by
 * writesSettled and by the store's close, so none is lost on a clean stop.
 */

const TABLE = sql.table('later_writes_test')
const create = (db: Kysely<any>) => sql`create table ${TABLE} (id integer primary key, note text not null)`.execute(db)
const insert = (id: number) => (trx: Kysely<any>) => sql`insert into ${TABLE} (id, note) values (${id}, ${`row ${id}`})`.execute(trx)
const ids = async (db: Kysely<any>) => (await sql<{id: number}>`select id from ${TABLE} order by id`.execute(db)).rows.map((row) => Number(row.id))

describe('writes nobody waits for', () => {
  it('are written together in one commit, and one that fails is reported alone', async () => {
    const store = await openTestStore()
    try {
      await create(store.db)
      const failures: unknown[] = []
      const before = writeStats(store.db).commits
      for (const id of [1, 2, 3, 2]) writeLater(store.db, insert(id), {durability: 'relaxed'}, (error) => failures.push(error))
      // Nothing is written yet: they are held (SQLite answers the read before any timer can run).
      if (!onPostgres) expect(await ids(store.db)).toEqual([])
      await writesSettled(store.db)
      expect(await ids(store.db)).toEqual([1, 2, 3])
      // The second insert of id 2 broke its key: it alone failed, once.
      expect(failures).toHaveLength(1)
      expect(writeStats(store.db).commits - before).toBe(1)
    } finally {
      await store.close()
    }
  })

  it('are written by the store’s close', async () => {
    const {options, drop} = await reopenableStore()
    try {
      const first = await openStore(options)
      await create(first.db)
      const failures: unknown[] = []
      for (const id of [7, 8]) writeLater(first.db, insert(id), {durability: 'relaxed'}, (error) => failures.push(error))
      await first.close()
      const second = await openStore(options)
      try {
        expect(await ids(second.db)).toEqual([7, 8])
        expect(failures).toEqual([])
      } finally {
        await second.close()
      }
    } finally {
      drop()
    }
  })
})
