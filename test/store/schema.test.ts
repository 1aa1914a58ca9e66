import {describe, expect, it} from 'vitest'
import {composeMigrations, SERVICE_SCHEMA} from '../../src/schema.js'

// Written out, not read from the code: a store an earlier release wrote records these names, so
// moving a migration to another owner must change neither a name nor the order they run in.
const SHIPPED = [
  '2026112201_registry_signon',
  '2026112202_partner',
  '2026112203_balance',
  '2026112204_pulses',
  '2026112205_conversations',
  '2026112401_sealed_secrets',
  '2026112402_auth_failures',
  '2026112403_member_sessions',
  '2026112404_token_last_used',
  '2026112501_conversation_term_days',
  '2026112601_signin_sessions',
  '2026112701_openid_connect',
  '2026112702_delivery_request_id',
  '2026112801_cache_notify',
  '2026112802_store_write_lock',
  '2026112901_withdrawal_context',
  '2026113001_conversation_search_lexemes',
]

describe('the composed schema', () => {
  it('keeps every shipped migration, under its name, in the order it has always run', () => {
    expect(Object.keys(SERVICE_SCHEMA.migrations)).toEqual(SHIPPED)
    expect(SERVICE_SCHEMA.notifiesChanges).toBe(true)
  })

  it('refuses two owners claiming one migration name', () => {
    const up = async () => undefined
    expect(() => composeMigrations({'0001_a': {up}}, {'0001_a': {up}})).toThrow(/two migrations are named 0001_a/)
    expect(Object.keys(composeMigrations({'0002_b': {up}}, {'0001_a': {up}}))).toEqual(['0001_a', '0002_b'])
  })
})
