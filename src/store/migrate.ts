import {sql, type Kysely} from 'kysely'
import {MEDPANEL_VERSION as medpanelVersion} from '../version.js'
import {inheritContext} from './context.js'
import {storeKind, tableExists} from './dialect.js'
import {loadKeyring} from './secrets.js'
import type {AnyMigration, MigrationContext, StoreMigration} from './migration-types.js'

/** A schema's migrations and the table that records which ran (one per schema in a file). */
export interface Schema {
  migrations: Record<string, AnyMigration>
  /** Defaults to `kysely_migration`, the table every store made so far records its migrations in. */
  migrationTableName?: string
  /**
   * The schema includes the store's own migrations (migrations/index.ts), whose PostgreSQL
   * triggers announce every change the caches must see: a PostgreSQL store listens for them.
   */
  notifiesChanges?: boolean
}

/** The store cannot be used by this release: made by a newer one, or read-only and behind. */
export class StoreVersionError extends Error {
  override name = 'StoreVersionError'
}

interface MigrationState {
  table: string
  /** Every migration this release has, in the order they run. */
  known: string[]
  applied: Set<string>
}

/** The advisory lock key migrations hold on PostgreSQL (any fixed number; this one spells MDPN). */
const MIGRATION_LOCK = 0x4d44504e

/** The newest schema a list of migration names reaches, as operators read it. */
const schemaName = (names: Iterable<string>) => [...names].sort().at(-1) ?? 'empty'

async function readState(db: Kysely<any>, schema: Schema, create: boolean): Promise<MigrationState> {
  const table = schema.migrationTableName ?? 'kysely_migration'
  if (create) {
    // The same shape Kysely's Migrator gave it, so stores from earlier releases read unchanged.
    await sql`create table if not exists ${sql.table(table)} (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(db)
  }
  const exists = create || (await tableExists(db, table))
  const rows = exists ? (await sql<{name: string}>`select name from ${sql.table(table)}`.execute(db)).rows : []
  return {table, known: Object.keys(schema.migrations).sort(), applied: new Set(rows.map((r) => r.name))}
}

/** Refuses a store that has migrations this release does not know: a newer release wrote it. */
function refuseNewer(state: MigrationState, where: string): void {
  const unknown = [...state.applied].filter((name) => !state.known.includes(name)).sort()
  if (unknown.length === 0) return
  throw new StoreVersionError(
    `${where} was written by a newer medpanel (store schema ${schemaName(state.applied)}); this is medpanel ${medpanelVersion} (schema ${schemaName(state.known)}), which does not know ${unknown.join(', ')}. Upgrade medpanel to open it; nothing was changed.`,
  )
}

/**
 * Brings the store up to this release's schema. Safe to run on every start, and from several
 * processes at once. Migrations only move forward, each in its own write transaction together
 * with its record, so a store is never left half-migrated: a failure rolls that migration back
 * whole and the store stays at the one before. A store with migrations this release does not know
 * is refused before anything is written.
 */
export async function migrateToLatest(db: Kysely<any>, schema: Schema, where = 'the store', context?: MigrationContext): Promise<void> {
  const state = await readState(db, schema, true)
  refuseNewer(state, where)
  for (const name of state.known) {
    if (state.applied.has(name)) continue
    await db.connection().execute(async (conn) => {
      // Another process migrating the same store waits here, then finds it done: SQLite's BEGIN
      // IMMEDIATE takes the write lock; on PostgreSQL a transaction-scoped advisory lock does.
      inheritContext(conn, db)
      const postgres = storeKind(db) === 'postgres'
      await (postgres ? sql`begin` : sql`begin immediate`).execute(conn)
      try {
        if (postgres) await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(conn)
        const done = await sql`select 1 from ${sql.table(state.table)} where name = ${name}`.execute(conn)
        if (done.rows.length === 0) {
          await (schema.migrations[name] as StoreMigration).up(conn, context ?? {keyring: loadKeyring(undefined)})
          await sql`insert into ${sql.table(state.table)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(conn)
        }
        await sql`commit`.execute(conn)
      } catch (error) {
        await sql`rollback`.execute(conn)
        const reason = error instanceof Error ? error.message : String(error)
        throw new Error(`migration ${name} failed, and ${where} was left as it was before it: ${reason}`)
      }
    })
  }
}

/** How many migrations the store records as applied (by any release), for the metrics. */
export async function appliedMigrations(db: Kysely<any>, schema: Schema): Promise<number> {
  return (await readState(db, schema, false)).applied.size
}

/** Where a store stands against this release's migrations, read without changing anything. */
export interface MigrationStatus {
  /** The store's schema: the newest migration it has run ('empty' for a store none has run on). */
  version: string
  /** The newest migration this release has. */
  latest: string
  /** This release's migrations the store has not run yet, in the order they would run. */
  pending: string[]
  /** Migrations the store has run that this release does not know: a newer release wrote it. */
  unknown: string[]
}

/**
 * The store's schema and the migrations this release would still run on it. Only reads: the
 * record table is not created when it is missing (an empty database), nothing is migrated, so
 * `status` can report on a store from an older or newer release without touching it.
 */
export async function migrationStatus(db: Kysely<any>, schema: Schema): Promise<MigrationStatus> {
  const state = await readState(db, schema, false)
  return {
    version: schemaName(state.applied),
    latest: schemaName(state.known),
    pending: state.known.filter((name) => !state.applied.has(name)),
    unknown: [...state.applied].filter((name) => !state.known.includes(name)).sort(),
  }
}

/**
 * For a store opened read-only: checks that it is at exactly this release's schema, since it
 * cannot be migrated.
 */
export async function checkSchema(db: Kysely<any>, schema: Schema, where = 'the store'): Promise<void> {
  const state = await readState(db, schema, false)
  refuseNewer(state, where)
  const pending = state.known.filter((name) => !state.applied.has(name))
  if (pending.length > 0) {
    throw new StoreVersionError(
      `${where} is read-only and at schema ${schemaName(state.applied)}, older than this release's ${schemaName(state.known)}; open it once with write access to migrate it`,
    )
  }
}
