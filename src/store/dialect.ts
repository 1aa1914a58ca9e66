import {sql, type ColumnDefinitionBuilder, type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder} from 'kysely'
import {contextOf} from './context.js'

/**
 * Where SQLite and PostgreSQL differ, in one place: transactions, the catalog, identity columns,
 * string aggregation. Interfaces' repositories call these instead of writing either dialect.
 */

export type StoreKind = 'sqlite' | 'postgres'

/** The kind of store behind a handle (or a connection or transaction taken from one). */
export function storeKind(db: object): StoreKind {
  return contextOf(db)?.kind ?? 'sqlite'
}

export const isPostgres = (db: object): boolean => storeKind(db) === 'postgres'

/** A read transaction: one consistent snapshot, no write lock. */
export function beginRead(kind: StoreKind): RawBuilder<unknown> {
  return kind === 'postgres' ? sql`begin isolation level repeatable read read only` : sql`begin`
}

/** True for PostgreSQL's "run it again" failures: serialization conflicts and deadlocks. */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as {code?: unknown} | null)?.code
  return code === '40001' || code === '40P01'
}

export async function tableExists(db: Kysely<any>, name: string): Promise<boolean> {
  const query =
    storeKind(db) === 'postgres'
      ? sql<{n: number}>`select count(*) as n from information_schema.tables where table_schema = current_schema() and table_name = ${name}`
      : sql<{n: number}>`select count(*) as n from sqlite_master where type = 'table' and name = ${name}`
  return Number((await query.execute(db)).rows[0]?.n ?? 0) > 0
}

/**
 * An integer key the store assigns in insertion order: SQLite's INTEGER PRIMARY KEY AUTOINCREMENT
 * (never reused), PostgreSQL's identity column (which still accepts explicit values, so a copied
 * store keeps its ids).
 */
export function autoIncrementKey(db: object): (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  return isPostgres(db) ? (c) => c.primaryKey().generatedByDefaultAsIdentity() : (c) => c.primaryKey().autoIncrement()
}

/** group_concat(expr, separator) on SQLite, string_agg on PostgreSQL. */
export function groupConcat(db: object, expression: Expression<string>, separator = ','): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`string_agg(${expression}, ${separator})` : sql<string>`group_concat(${expression}, ${separator})`
}

/**
 * SELECT … FOR UPDATE on PostgreSQL: the row stays locked until the transaction ends, so writers
 * of it queue. SQLite has no row locks and needs none: its write transactions already run one at
 * a time.
 */
export function lockForUpdate<DB, TB extends keyof DB, O>(db: object, query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return isPostgres(db) ? query.forUpdate() : query
}

/**
 * A queue claim: on PostgreSQL the rows are locked as they are picked, and rows another claimer
 * has locked are skipped (FOR UPDATE SKIP LOCKED), so concurrent workers take different rows
 * without waiting for or failing on each other. SQLite's writers already run one at a time.
 */
export function claimForUpdate<DB, TB extends keyof DB, O>(db: object, query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return isPostgres(db) ? query.forUpdate().skipLocked() : query
}
