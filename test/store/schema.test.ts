import {sql} from 'kysely'
import {describe, expect, it} from 'vitest'
import {composeMigrations, openStore, SERVICE_SCHEMA} from '../../src/schema.js'
import {storeImage} from '../../src/store/handle.js'
import {sqliteDriverName} from '../../src/store/runtime.js'

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
  '2026120101_client_auth_method',
  '2026120102_refresh_tokens_and_consents',
  '2026120201_client_keys',
  '2026120202_used_jtis',
  '2026120203_require_par',
  '2026120204_pushed_requests',
  '2026120301_dpop',
  '2026120302_dpop_bound_access_tokens',
  '2026120311_backchannel_logout',
  '2026120312_backchannel_logout_sessions',
  '2026120313_code_dpop_jkt',
  '2026120401_access_token_format',
  '2026120401_client_registration',
  '2026120401_operator_audit',
  '2026120402_code_resource',
  '2026120403_replay_store',
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

describe('an in-memory store from the bytes of another (what the tests open)', () => {
  const countClients = async (db: Parameters<typeof storeImage>[0]) => Number((await sql<{n: number}>`select count(*) as n from clients`.execute(db)).rows[0]!.n)
  const addClient = (db: Parameters<typeof storeImage>[0], id: string) =>
    sql`insert into clients (id, name, url, logo_url, redirect_uris, secret_hash, created_at, updated_at) values (${id}, 'A', 'https://a.example', 'https://a.example/l.png', '[]', 'x', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`.execute(
      db,
    )

  it.runIf(sqliteDriverName() === 'better-sqlite3')('is migrated, holds what the original held, and is a store of its own', async () => {
    const original = await openStore({file: ':memory:'})
    await addClient(original.db, 'c1')
    const image = storeImage(original.db)!
    expect(image.byteLength).toBeGreaterThan(0)
    const copy = await openStore({file: ':memory:', image})
    const second = await openStore({file: ':memory:', image})
    try {
      expect(await countClients(copy.db)).toBe(1)
      await addClient(copy.db, 'c2')
      expect([await countClients(original.db), await countClients(copy.db), await countClients(second.db)]).toEqual([1, 2, 1])
      const migrations = await sql<{name: string}>`select name from kysely_migration order by name`.execute(copy.db)
      expect(migrations.rows.map((row) => row.name)).toEqual(Object.keys(SERVICE_SCHEMA.migrations))
    } finally {
      await Promise.all([original.close(), copy.close(), second.close()])
    }
  })

  it('is refused with a file, and by a driver that cannot read bytes', async () => {
    const image = new Uint8Array([1, 2, 3])
    await expect(openStore({file: '/nonexistent/store.db', image})).rejects.toThrow(/a store from an image is an in-memory one/)
    if (sqliteDriverName() === 'node:sqlite') {
      await expect(openStore({file: ':memory:', image})).rejects.toThrow(/node:sqlite cannot open a database from its bytes/)
    }
  })
})
