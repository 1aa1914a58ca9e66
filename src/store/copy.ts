import {sql, type Kysely} from 'kysely'
import {existsSync} from 'node:fs'
import {keyringOf, readTransaction, storeFile, writeTransaction} from './db.js'
import {storeKind} from './dialect.js'
import {SEALED_COLUMNS} from './key-rotation.js'
import {isSealed, keyFileOf, loadKeyring, seal, unseal} from './secrets.js'

/**
 * Copies every row of a SQLite store into a PostgreSQL store that has nothing of its own yet:
 * the way an operator moves to PostgreSQL when one machine is no longer enough. The target is
 * migrated first (by openStore), so both have this release's schema; rows go over table by table
 * in foreign-key order inside one transaction on each side (a consistent snapshot of the source,
 * all or nothing on the target). Ids are kept, identity sequences are moved past them, secrets
 * are re-sealed under the target's key, and what the target computes itself (the search key, a
 * search index) is left to it.
 */

/** Tables a freshly migrated store already fills (defaults), replaced by the source's rows. */
const SEEDED_BY_MIGRATIONS = new Set(['withdrawal_types', 'settings'])
/** Each store records its own migrations. */
const OWN_BOOKKEEPING = new Set(['kysely_migration'])
const PAGE = 500

export interface CopiedTable {
  table: string
  rows: number
}

export interface CopyResult {
  tables: CopiedTable[]
  rows: number
  /** Secrets opened with the source's key and sealed again with the target's. */
  resealed: number
}

export class TargetNotEmptyError extends Error {}

async function sqliteColumns(db: Kysely<any>, table: string): Promise<string[]> {
  // table_xinfo marks generated columns (hidden 2 or 3): the target computes those itself.
  const rows = (await sql<{name: string; hidden: number}>`select name, hidden from pragma_table_xinfo(${table})`.execute(db)).rows
  return rows.filter((row) => row.hidden === 0).map((row) => row.name)
}

async function postgresColumns(db: Kysely<any>): Promise<Map<string, {columns: Set<string>; identity: string[]}>> {
  const rows = (
    await sql<{table_name: string; column_name: string; is_identity: string; is_generated: string}>`
      select table_name, column_name, is_identity, is_generated from information_schema.columns where table_schema = current_schema()`.execute(db)
  ).rows
  const tables = new Map<string, {columns: Set<string>; identity: string[]}>()
  for (const row of rows) {
    const entry = tables.get(row.table_name) ?? {columns: new Set<string>(), identity: []}
    if (row.is_generated === 'NEVER') entry.columns.add(row.column_name)
    if (row.is_identity === 'YES') entry.identity.push(row.column_name)
    tables.set(row.table_name, entry)
  }
  return tables
}

/** The target's tables, each after every table it references. */
async function foreignKeyOrder(db: Kysely<any>, tables: string[]): Promise<string[]> {
  const edges = (
    await sql<{child: string; parent: string}>`
      select c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent
      from pg_constraint c join pg_namespace n on n.oid = c.connamespace
      where c.contype = 'f' and n.nspname = current_schema()`.execute(db)
  ).rows
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set()]))
  for (const {child, parent} of edges) if (child !== parent && parents.has(child) && parents.has(parent)) parents.get(child)!.add(parent)
  const ordered: string[] = []
  const placed = new Set<string>()
  const visit = (table: string, path: Set<string>) => {
    if (placed.has(table) || path.has(table)) return
    path.add(table)
    for (const parent of parents.get(table) ?? []) visit(parent, path)
    placed.add(table)
    ordered.push(table)
  }
  for (const table of [...tables].sort()) visit(table, new Set())
  return ordered
}

export async function copyStore(source: Kysely<any>, target: Kysely<any>, onTable?: (copied: CopiedTable) => void): Promise<CopyResult> {
  if (storeKind(source) !== 'sqlite') throw new Error('the source must be a SQLite store (--db FILE)')
  if (storeKind(target) !== 'postgres') throw new Error('the target must be a PostgreSQL database (--to postgres://…)')
  const targetTables = await postgresColumns(target)
  const sourceTables = (await sql<{name: string}>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(source)).rows.map((r) => r.name)
  const shared = sourceTables.filter((table) => targetTables.has(table) && !OWN_BOOKKEEPING.has(table))
  const order = await foreignKeyOrder(target, shared)

  for (const table of order) {
    if (SEEDED_BY_MIGRATIONS.has(table)) continue
    const found = (await sql<{n: number}>`select count(*) as n from ${sql.table(table)}`.execute(target)).rows[0]
    if (Number(found?.n ?? 0) > 0) {
      throw new TargetNotEmptyError(`the target already holds data (table ${table} has rows); copy into an empty database, so nothing there is overwritten or mixed`)
    }
  }

  // A SQLite store's secrets are sealed with the key file beside it, even when MEDPANEL_SECRET_KEY
  // is set for the target; a store that never had a key file was sealed with the variable's key.
  const file = storeFile(source)
  const sourceKeys = file && existsSync(keyFileOf(file)) ? loadKeyring(file, null) : keyringOf(source)
  const targetKeys = keyringOf(target)
  let resealed = 0
  const reseal = (table: string, row: Record<string, unknown>) => {
    for (const column of SEALED_COLUMNS[table]?.columns ?? []) {
      const value = row[column]
      if (typeof value !== 'string') continue
      row[column] = seal(targetKeys, isSealed(value) ? unseal(sourceKeys, value) : value)
      resealed++
    }
  }

  const copied: CopiedTable[] = []
  await readTransaction(source, (snapshot) =>
    writeTransaction(target, async (trx) => {
      for (const table of [...order].reverse()) if (SEEDED_BY_MIGRATIONS.has(table)) await sql`delete from ${sql.table(table)}`.execute(trx)
      for (const table of order) {
        const wanted = targetTables.get(table)!
        const columns = (await sqliteColumns(snapshot, table)).filter((column) => wanted.columns.has(column))
        let rows = 0
        for (let offset = 0; ; offset += PAGE) {
          // rowid order where the table has one; WITHOUT ROWID tables in their key's order.
          const page = (
            await sql<Record<string, unknown>>`select ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table)} order by ${sql.raw(
              (await hasRowid(snapshot, table)) ? 'rowid' : '1, 2',
            )} limit ${PAGE} offset ${offset}`.execute(snapshot)
          ).rows
          if (page.length === 0) break
          for (const row of page) reseal(table, row)
          await trx.insertInto(table).values(page).execute()
          rows += page.length
          if (page.length < PAGE) break
        }
        for (const column of wanted.identity) {
          await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${sql.ref(column)}) from ${sql.table(table)}), 0) + 1, false)`.execute(trx)
        }
        const entry = {table, rows}
        copied.push(entry)
        onTable?.(entry)
      }
    }),
  )
  return {tables: copied, rows: copied.reduce((sum, t) => sum + t.rows, 0), resealed}
}

async function hasRowid(db: Kysely<any>, table: string): Promise<boolean> {
  const row = (await sql<{sql: string}>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db)).rows[0]
  return !/without\s+rowid\s*$/i.test(row?.sql ?? '')
}
