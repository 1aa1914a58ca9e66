import type {AnyMigration} from '../../../store/migration-types.js'
import * as pulses from './2026112204_pulses.js'

/** Interface D's migrations. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112204_pulses': pulses,
}
