import type {AnyMigration} from '../../../store/migration-types.js'
import * as partner from './2026112202_partner.js'
import * as deliveryRequestId from './2026112702_delivery_request_id.js'

/** Interface B's migrations. Names sort in the order they run; append new ones, never edit one that has shipped. */
export const migrations: Record<string, AnyMigration> = {
  '2026112202_partner': partner,
  '2026112702_delivery_request_id': deliveryRequestId,
}
