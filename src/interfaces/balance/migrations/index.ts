import type {AnyMigration} from '../../../store/migration-types.js'
import * as balance from './2026112203_balance.js'
import * as withdrawalContext from './2026112901_withdrawal_context.js'

/** Interface C's migrations. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112203_balance': balance,
  '2026112901_withdrawal_context': withdrawalContext,
}
