import type {AnyMigration} from '../migration-types.js'
import * as registrySignon from './2026112201_registry_signon.js'
import * as conversations from './2026112205_conversations.js'
import * as partner from './2026112202_partner.js'
import * as balance from './2026112203_balance.js'
import * as pulses from './2026112204_pulses.js'
import * as sealedSecrets from './2026112401_sealed_secrets.js'
import * as authFailures from './2026112402_auth_failures.js'
import * as memberSessions from './2026112403_member_sessions.js'
import * as tokenLastUsed from './2026112404_token_last_used.js'
import * as conversationTermDays from './2026112501_conversation_term_days.js'
import * as signinSessions from './2026112601_signin_sessions.js'
import * as openidConnect from './2026112701_openid_connect.js'
import * as deliveryRequestId from './2026112702_delivery_request_id.js'
import * as cacheNotify from './2026112801_cache_notify.js'
import * as storeWriteLock from './2026112802_store_write_lock.js'
import * as withdrawalContext from './2026112901_withdrawal_context.js'

/**
 * Every migration, imported as code so a bundled executable carries them. Keys sort in the order
 * they run: a timestamp, then a name. Append new ones; never edit one that has shipped.
 */
export const migrations: Record<string, AnyMigration> = {
  '2026112201_registry_signon': registrySignon,
  '2026112205_conversations': conversations,
  '2026112202_partner': partner,
  '2026112203_balance': balance,
  '2026112204_pulses': pulses,
  '2026112401_sealed_secrets': sealedSecrets,
  '2026112402_auth_failures': authFailures,
  '2026112403_member_sessions': memberSessions,
  '2026112404_token_last_used': tokenLastUsed,
  '2026112501_conversation_term_days': conversationTermDays,
  '2026112601_signin_sessions': signinSessions,
  '2026112701_openid_connect': openidConnect,
  '2026112702_delivery_request_id': deliveryRequestId,
  '2026112801_cache_notify': cacheNotify,
  '2026112802_store_write_lock': storeWriteLock,
  '2026112901_withdrawal_context': withdrawalContext,
}
