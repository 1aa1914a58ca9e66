import {Migrator, type Kysely, type Migration} from 'kysely'
import {migrations as serviceMigrations} from './migrations/index.js'

/** A schema's migrations and the table that records which ran (one per schema in a file). */
export interface Schema {
  migrations: Record<string, Migration>
  migrationTableName?: string
}

export const SERVICE_SCHEMA: Schema = {migrations: serviceMigrations}

/** Brings the store up to the newest schema. Safe to run on every start. */
export async function migrateToLatest(db: Kysely<any>, schema: Schema = SERVICE_SCHEMA): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: {getMigrations: async () => schema.migrations},
    ...(schema.migrationTableName
      ? {migrationTableName: schema.migrationTableName, migrationLockTableName: `${schema.migrationTableName}_lock`}
      : {}),
  })
  const {error, results} = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '))
  }
}
