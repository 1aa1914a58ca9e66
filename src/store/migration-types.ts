import type {Kysely, Migration} from 'kysely'
import type {Keyring} from './secrets.js'

/** What a migration may need beyond the database: the keys that seal the store's secrets. */
export interface MigrationContext {
  keyring: Keyring
}

/** A Kysely migration, which may also take the context (to seal secrets an earlier release kept plain). */
export interface StoreMigration {
  up(db: Kysely<any>, context: MigrationContext): Promise<void>
}

export type AnyMigration = Migration | StoreMigration
