import type {AnyMigration} from '../../store/migration-types.js'
import * as operatorAudit from './2026120401_operator_audit.js'

/** The operator layer's migrations: its audit trail. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026120401_operator_audit': operatorAudit,
}
