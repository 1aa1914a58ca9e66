import {Migrator, type Kysely, type MigrationProvider} from 'kysely'
import {migrations} from './migrations/index.js'

const provider: MigrationProvider = {getMigrations: async () => migrations}

/** Brings the store up to the newest schema. Safe to run on every start. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({db, provider})
  const {error, results} = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '))
  }
}
