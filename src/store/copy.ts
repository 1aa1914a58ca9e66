import {sql, type Kysely, type RawBuilder} from 'kysely'
import {existsSync} from 'node:fs'
import type {StoreParts} from './database.js'
import {storeFile} from './handle.js'
import {readTransaction, writeTransaction} from './transactions.js'
import {storeKind} from './dialect.js'
import {SEALED_COLUMNS} from './key-rotation.js'
import {isSealed, type Keyring, keyFileOf, loadKeyring, seal, unseal} from './secrets.js'

/**
 * Copies every row of one store into a store of the other kind that has nothing of its own yet:
 * SQLite into PostgreSQL, the way an operator moves there when one machine is no longer enough,
 * and PostgreSQL into a new SQLite file, the way an operator takes a copy of production to a
 * laptop. The target is migrated first (by openStore), so both have this release's schema; rows
 * go over table by table in foreign-key order inside one transaction on each side (a consistent
 * snapshot of the source, all or nothing on the target), and each table's count on the target
 * is checked against the source's before that transaction commits. Ids are kept, identity
 * sequences are moved past them, secrets are re-sealed under the target's key, and what the
 * target computes itself (the search key, a search index) is left to it.
 */

/** Tables a freshly migrated store already fills (defaults), replaced by the source's rows. */
const SEEDED_BY_MIGRATIONS = new Set(['withdrawal_types', 'settings'])
/** Each store records its own migrations. */
const OWN_BOOKKEEPING = new Set(['kysely_migration'])
const PAGE = 500
/**
 * Values one INSERT may bind: SQLite's default limit (SQLITE_MAX_VARIABLE_NUMBER, 32766 since
 * 3.32), below PostgreSQL's 65535. A page of a wide table is inserted in several statements.
 */
const MAX_PARAMETERS = 32_766

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

/** A table's columns that hold data of their own (not generated), and its identity columns. */
interface TableColumns {
  columns: Set<string>
  identity: string[]
}

async function sqliteTables(db: Kysely<any>): Promise<Map<string, TableColumns>> {
  // Virtual tables (a search index and its views) are built by the store itself from its rows.
  const names = (await sql<{name: string}>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and sql not like 'create virtual%'`.execute(db)).rows
  const tables = new Map<string, TableColumns>()
  for (const {name} of names) {
    // table_xinfo marks generated columns (hidden 2 or 3): the target computes those itself.
    const rows = (await sql<{name: string; hidden: number}>`select name, hidden from pragma_table_xinfo(${name})`.execute(db)).rows
    // Ids are kept as given; SQLite moves an AUTOINCREMENT counter past them on its own.
    tables.set(name, {columns: new Set(rows.filter((row) => row.hidden === 0).map((row) => row.name)), identity: []})
  }
  return tables
}

async function postgresTables(db: Kysely<any>): Promise<Map<string, TableColumns>> {
  const rows = (
    await sql<{table_name: string; column_name: string; is_identity: string; is_generated: string}>`
      select table_name, column_name, is_identity, is_generated from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`.execute(
      db,
    )
  ).rows
  const tables = new Map<string, TableColumns>()
  for (const row of rows) {
    const entry = tables.get(row.table_name) ?? {columns: new Set<string>(), identity: []}
    if (row.is_generated === 'NEVER') entry.columns.add(row.column_name)
    if (row.is_identity === 'YES') entry.identity.push(row.column_name)
    tables.set(row.table_name, entry)
  }
  return tables
}

function tablesOf(db: Kysely<any>): Promise<Map<string, TableColumns>> {
  return storeKind(db) === 'postgres' ? postgresTables(db) : sqliteTables(db)
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

export async function copyStore(from: StoreParts, to: StoreParts, onTable?: (copied: CopiedTable) => void): Promise<CopyResult> {
  const source = from.db
  const target = to.db
  if (storeKind(source) === storeKind(target)) throw new Error('copy-store copies between SQLite and PostgreSQL: one of the two stores must be each')
  const sourceTables = await tablesOf(source)
  const targetTables = await tablesOf(target)
  const shared = [...sourceTables.keys()].filter((table) => targetTables.has(table) && !OWN_BOOKKEEPING.has(table))
  // PostgreSQL's catalog names the foreign keys, whichever side it is.
  const order = await foreignKeyOrder(storeKind(source) === 'postgres' ? source : target, shared)
  await refuseFilledTarget(target, order)

  const opening = sourceKeys(from)
  const sealing = targetKeys(to)
  let resealed = 0
  const reseal = (table: string, row: Record<string, unknown>) => {
    for (const column of SEALED_COLUMNS[table]?.columns ?? []) {
      const value = row[column]
      if (typeof value !== 'string') continue
      row[column] = seal(sealing, isSealed(value) ? unseal(opening, value) : value)
      resealed++
    }
  }

  const copied: CopiedTable[] = []
  await readTransaction(source, (snapshot) =>
    writeTransaction(target, async (trx) => {
      // A self-referencing row may come before the row it names: SQLite checks at the commit.
      if (storeKind(target) === 'sqlite') await sql`pragma defer_foreign_keys = on`.execute(trx)
      for (const table of [...order].reverse()) if (SEEDED_BY_MIGRATIONS.has(table)) await sql`delete from ${sql.table(table)}`.execute(trx)
      for (const table of order) {
        const wanted = targetTables.get(table)!
        const columns = [...sourceTables.get(table)!.columns].filter((column) => wanted.columns.has(column))
        const rows = await copyRows(snapshot, trx, table, columns, (row) => reseal(table, storeKind(target) === 'sqlite' ? sqliteRow(row) : row))
        for (const column of wanted.identity) {
          await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${sql.ref(column)}) from ${sql.table(table)}), 0) + 1, false)`.execute(trx)
        }
        checkCount(table, await countRows(snapshot, table), await countRows(trx, table))
        const entry = {table, rows}
        copied.push(entry)
        onTable?.(entry)
      }
    }),
  )
  return {tables: copied, rows: copied.reduce((sum, t) => sum + t.rows, 0), resealed}
}

/** Copies `columns` of every row of `table`, a page at a time, each row prepared by `prepare`; how many. */
async function copyRows(from: Kysely<any>, to: Kysely<any>, table: string, columns: string[], prepare: (row: Record<string, unknown>) => void): Promise<number> {
  const orderBy = await pageOrder(from, table)
  const perInsert = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length))
  let rows = 0
  for (let offset = 0; ; offset += PAGE) {
    const page = (
      await sql<Record<string, unknown>>`select ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table)} order by ${orderBy} limit ${PAGE} offset ${offset}`.execute(
        from,
      )
    ).rows
    if (page.length === 0) break
    for (const row of page) prepare(row)
    for (let at = 0; at < page.length; at += perInsert)
      await to
        .insertInto(table)
        .values(page.slice(at, at + perInsert))
        .execute()
    rows += page.length
    if (page.length < PAGE) break
  }
  return rows
}

async function countRows(db: Kysely<any>, table: string): Promise<number> {
  return Number((await sql<{n: number}>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]?.n ?? 0)
}

/** A table the copy left short (or long) fails the whole copy, before the target's commit. */
function checkCount(table: string, source: number, target: number): void {
  if (source !== target) throw new Error(`the copy of table ${table} holds ${target} rows where the source holds ${source}; nothing was kept`)
}

async function refuseFilledTarget(target: Kysely<any>, tables: string[]): Promise<void> {
  for (const table of tables) {
    if (SEEDED_BY_MIGRATIONS.has(table)) continue
    if ((await countRows(target, table)) > 0) {
      throw new TargetNotEmptyError(`the target already holds data (table ${table} has rows); copy into an empty database, so nothing there is overwritten or mixed`)
    }
  }
}

/**
 * The keys the source's secrets are sealed with. A SQLite store's are in the key file beside it,
 * even when MEDPANEL_SECRET_KEY is set for the PostgreSQL side; one that never had a key file was
 * sealed with the variable's key.
 */
function sourceKeys({db, keys}: StoreParts): Keyring {
  const file = storeFile(db)
  return storeKind(db) === 'sqlite' && file && existsSync(keyFileOf(file)) ? loadKeyring(file, null) : keys
}

/**
 * The keys to seal the target's secrets with. A new SQLite store gets a key file of its own (0600,
 * made here), as any new store does, whatever MEDPANEL_SECRET_KEY holds: the copy then opens on a
 * machine that has no such variable (a laptop).
 */
function targetKeys({db, keys}: StoreParts): Keyring {
  const file = storeFile(db)
  return storeKind(db) === 'sqlite' && file ? loadKeyring(file, null) : keys
}

/**
 * The order a table's pages are read in: stable from page to page within the snapshot, and the
 * order the rows were written in where that is known, so a new SQLite file numbers rows (the
 * rowid of a table without an integer key) as the source did.
 */
async function pageOrder(db: Kysely<any>, table: string): Promise<RawBuilder<unknown>> {
  if (storeKind(db) === 'postgres') {
    const key = (
      await sql<{name: string}>`
        select a.attname as name from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
        where i.indrelid = ${table}::regclass and i.indisprimary order by array_position(i.indkey::int2[], a.attnum)`.execute(db)
    ).rows
    return key.length > 0 ? sql.join(key.map((column) => sql.ref(column.name))) : sql.raw('ctid')
  }
  // rowid order where the table has one; WITHOUT ROWID tables in their key's order.
  return sql.raw((await hasRowid(db, table)) ? 'rowid' : '1, 2')
}

/**
 * A PostgreSQL row as SQLite binds it: its drivers take numbers, strings, bigints, bytes and null
 * only, and medpanel keeps flags as 0/1, times as ISO text and JSON as text on SQLite.
 */
function sqliteRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const [column, value] of Object.entries(row)) {
    if (typeof value === 'boolean') row[column] = value ? 1 : 0
    else if (value instanceof Date) row[column] = value.toISOString()
    else if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) row[column] = JSON.stringify(value)
  }
  return row
}

async function hasRowid(db: Kysely<any>, table: string): Promise<boolean> {
  const row = (await sql<{sql: string}>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db)).rows[0]
  return !/without\s+rowid\s*$/i.test(row?.sql ?? '')
}
