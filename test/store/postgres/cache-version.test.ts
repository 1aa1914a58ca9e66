import {CompiledQuery, Kysely, PostgresDialect, sql, type DatabaseConnection, type Dialect, type QueryResult} from 'kysely'
import pg from 'pg'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {findTokenWithOwners, insertToken, markTokenUsed, revokeTokens} from '../../../src/grants/repository.js'
import {setContext} from '../../../src/store/context.js'
import type {Database} from '../../../src/schema.js'
import {openStore} from '../../../src/schema.js'
import type {Store} from '../../../src/store/db.js'
import {storeVersion} from '../../../src/store/handle.js'
import {writeTransaction} from '../../../src/store/transactions.js'
import {CacheVersion, classifyStatement, listenerName, trackCacheWrites} from '../../../src/store/postgres/listen.js'
import {versionCache} from '../../../src/store/version-cache.js'
import {onPostgres, reopenableStore} from '../../helpers/store.js'
import {scaledBound, timeOf} from '../../helpers/timing.js'

// The cache version of a PostgreSQL store (src/store/postgres/listen.ts): the logic on its own,
// then two stores on one database standing for two processes.

/** Compiles only: the pool is never asked for a connection. */
const compiler = new Kysely<Database>({dialect: new PostgresDialect({pool: {} as never})})
const kindOf = (query: {compile(): CompiledQuery}) => classifyStatement(query.compile())
const rawKind = (text: string) => classifyStatement(CompiledQuery.raw(text))

describe('the local cache version', () => {
  it('is undefined until the listener listens, counts changes, and is undefined again while it is down', () => {
    const version = new CacheVersion()
    expect(version.current()).toBeUndefined()
    version.changed()
    expect(version.current()).toBeUndefined()
    version.regained()
    const first = version.current()!
    expect(first).toBeTypeOf('number')
    version.changed()
    expect(version.current()).toBe(first + 1)
    version.lost()
    expect(version.current()).toBeUndefined()
    version.changed()
    version.regained()
    // Back, and past every value seen before, so nothing cached earlier is served.
    expect(version.current()!).toBeGreaterThan(first + 1)
    expect(version.stats).toMatchObject({connects: 2, losses: 1})
  })

  it('drives versionCache: reuse while unchanged, re-read after a change, no caching while down', async () => {
    const version = new CacheVersion()
    const db = {} as Kysely<any>
    setContext(db, {kind: 'postgres', version: version.current})
    const cache = versionCache<string, number>(10)
    let loads = 0
    const read = () => cache(db, 'k', async () => ++loads)
    await read()
    await read()
    expect(loads).toBe(2) // down from the start: every call reads
    version.regained()
    await read()
    await read()
    expect(loads).toBe(3)
    version.changed()
    await read()
    await read()
    expect(loads).toBe(4)
    version.lost()
    await read()
    await read()
    expect(loads).toBe(6)
    version.regained()
    await read()
    await read()
    expect(loads).toBe(7)
  })

  it('tells the writes that may change a cached row from the rest', () => {
    const db = compiler
    expect(kindOf(db.updateTable('access_tokens').set({revoked_at: 'x'}).where('token_hash', '=', 'h'))).toBe('write')
    expect(kindOf(db.updateTable('access_tokens').set({last_used_at: 'x'}).where('token_hash', '=', 'h'))).toBeUndefined()
    expect(kindOf(db.updateTable('members').set({active: 0}).where('id', '=', 1))).toBe('write')
    expect(kindOf(db.updateTable('clients as c').set({name: 'n'}).where('c.id', '=', 'x'))).toBe('write')
    expect(kindOf(db.updateTable('conversation_api_keys').set({data_calls_used: 3}).where('id', '=', 'k'))).toBeUndefined()
    expect(kindOf(db.updateTable('conversation_api_keys').set({revoked_at: 'x'}).where('id', '=', 'k'))).toBe('write')
    expect(kindOf(db.deleteFrom('access_tokens').where('expires_at', '<', 'x'))).toBe('write')
    expect(kindOf(db.deleteFrom('auth_failures').where('subject', '=', 'x'))).toBeUndefined()
    expect(kindOf(db.updateTable('auth_failures').set({failures: 2}).where('subject', '=', 'x'))).toBeUndefined()
    expect(
      kindOf(
        db.insertInto('access_tokens').values({token_hash: 'h', client_id: 'c', member_id: 1, code_hash: null, scopes: '', expires_at: null, revoked_at: null, created_at: 'x'}),
      ),
    ).toBeUndefined()
    expect(kindOf(db.selectFrom('members').selectAll())).toBeUndefined()
    expect(rawKind('begin')).toBe('begin')
    expect(rawKind('start transaction isolation level serializable')).toBe('begin')
    expect(rawKind('commit')).toBe('end')
    expect(rawKind('rollback')).toBe('end')
    expect(rawKind('rollback to savepoint s1')).toBeUndefined()
    expect(rawKind('update "clients" set partner_password = $1 where id = $2')).toBe('write')
    expect(rawKind('update pulse_respondents as r set export_json = $1')).toBeUndefined()
  })

  it('bumps after a statement outside a transaction, and at the end of a transaction that wrote', async () => {
    const version = new CacheVersion()
    version.regained()
    const ran: string[] = []
    const connection: DatabaseConnection = {
      executeQuery: async <R>(query: CompiledQuery) => {
        ran.push(query.sql)
        return {rows: []} as QueryResult<R>
      },
      streamQuery: () => {
        throw new Error('unused')
      },
    }
    const inner: Dialect = {
      createAdapter: () => compiler.getExecutor().adapter,
      createIntrospector: () => ({}) as never,
      createQueryCompiler: () => ({}) as never,
      createDriver: () => ({
        init: async () => undefined,
        acquireConnection: async () => connection,
        beginTransaction: async () => undefined,
        commitTransaction: async () => undefined,
        rollbackTransaction: async () => undefined,
        releaseConnection: async () => undefined,
        destroy: async () => undefined,
      }),
    }
    const conn = await trackCacheWrites(inner, version).createDriver().acquireConnection()
    const revoke = compiler.updateTable('access_tokens').set({revoked_at: 'x'}).compile()
    const use = compiler.updateTable('access_tokens').set({last_used_at: 'x'}).compile()
    const start = version.current()!
    await conn.executeQuery(use)
    expect(version.current()).toBe(start)
    await conn.executeQuery(revoke)
    expect(version.current()).toBe(start + 1)
    await conn.executeQuery(CompiledQuery.raw('begin'))
    await conn.executeQuery(revoke)
    // Not yet: a reader now would still see the old row and must not keep it under a newer version.
    expect(version.current()).toBe(start + 1)
    await conn.executeQuery(CompiledQuery.raw('commit'))
    expect(version.current()).toBe(start + 2)
    await conn.executeQuery(CompiledQuery.raw('begin'))
    await conn.executeQuery(use)
    await conn.executeQuery(CompiledQuery.raw('commit'))
    expect(version.current()).toBe(start + 2)
    expect(ran).toHaveLength(8)
  })
})

async function until<T>(what: string, probe: () => T | Promise<T>, limitMs = 20_000): Promise<{value: T; ms: number}> {
  const started = performance.now()
  for (;;) {
    const value = await probe()
    if (value) return {value, ms: performance.now() - started}
    if (performance.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe.skipIf(!onPostgres)('two stores on one PostgreSQL database', () => {
  let a: Store
  let b: Store
  let admin: pg.Client
  let drop: () => void
  const now = '2026-11-26T00:00:00.000Z'

  beforeAll(async () => {
    const made = await reopenableStore()
    drop = made.drop
    a = await openStore(made.options)
    b = await openStore(made.options)
    admin = new pg.Client({connectionString: made.options.url})
    await admin.connect()
    await a.db
      .insertInto('clients')
      .values({
        id: 'c1',
        secret_hash: 'x',
        name: 'C',
        url: 'https://c.example',
        logo_url: 'https://c.example/l.png',
        redirect_uris: '[]',
        grants: '["signon"]',
        admin: 0,
        token_ttl: null,
        expired_at: null,
        partner_url: null,
        partner_username: null,
        partner_password: null,
        signing_secret: null,
        created_at: now,
        updated_at: now,
      } as never)
      .execute()
    await insertToken(a.db, {token_hash: 't1', client_id: 'c1', member_id: null, code_hash: null, scopes: 'profile', expires_at: null, created_at: now})
    await until('both listeners', () => storeVersion(a.db) !== undefined && storeVersion(b.db) !== undefined)
  })

  afterAll(async () => {
    await admin?.end()
    await a?.close()
    await b?.close()
    drop?.()
  })

  it('refuses a revoked token at once in the revoking store, and within milliseconds in the other', async () => {
    expect(await findTokenWithOwners(a.db, 't1')).toBeDefined()
    expect(await findTokenWithOwners(b.db, 't1')).toBeDefined()
    const before = storeVersion(b.db)!
    // A read on the other store, timed now: the notification may take many of them on a busy machine.
    const read = await timeOf(() => findTokenWithOwners(b.db, 't1'))
    await writeTransaction(a.db, (trx) => revokeTokens(trx, {tokenHash: 't1'}, now))
    expect((await findTokenWithOwners(a.db, 't1'))?.revoked_at).toBe(now)
    const {ms} = await until('the other store to hear of it', () => storeVersion(b.db) !== before)
    console.log(`cache notification reached the other store after ${ms.toFixed(1)} ms`)
    expect(ms).toBeLessThan(scaledBound(2_000, read))
    expect((await findTokenWithOwners(b.db, 't1'))?.revoked_at).toBe(now)
  })

  it("notifies nothing for a token's last use, nor bumps for writes to other tables", async () => {
    const ownBefore = storeVersion(a.db)!
    const otherBefore = storeVersion(b.db)!
    await markTokenUsed(a.db, 't1', now)
    await writeTransaction(a.db, (trx) => trx.insertInto('auth_failures').values({subject: 's', failures: 1, locked_until: null, last_failure_at: now}).execute())
    expect(storeVersion(a.db)).toBe(ownBefore)
    // Notifications arrive in commit order: once this one is heard, any from the writes above would have been.
    await admin.query(`select pg_notify('medpanel_cache', 'sentinel')`)
    await until('the sentinel', () => storeVersion(b.db) !== otherBefore)
    expect(storeVersion(b.db)).toBe(otherBefore + 1)
  })

  it('caches nothing while its listener is down, and resumes once it has listened again', async () => {
    const before = storeVersion(b.db)!
    const killed = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [listenerName()])
    expect(killed.rowCount).toBe(2)
    await until('the loss to be noticed', () => storeVersion(b.db) === undefined || storeVersion(b.db)! > before)
    const {value: after} = await until('the listener to be back', () => storeVersion(b.db))
    expect(after).toBeGreaterThan(before)
    // Each store reconnects on its own schedule: wait for both listeners, not just b's.
    const listening = () => admin.query('select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = current_database()', [listenerName()])
    await until('both listeners to be back', async () => (await listening()).rows[0].n === 2)
  })

  it('ends the listener on close, promptly', async () => {
    const made = await reopenableStore()
    try {
      let c: Store | undefined
      // Opening (connections made, the schema checked), timed: closing takes no more than a few of it.
      const opening = await timeOf(async () => {
        c = await openStore(made.options)
      })
      await until('its listener', () => storeVersion(c!.db) !== undefined)
      const ms = await timeOf(() => c!.close())
      console.log(`store with a listener closed in ${ms.toFixed(1)} ms`)
      expect(ms).toBeLessThan(scaledBound(5_000, opening, 5))
      const left = () =>
        admin.query('select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = $2', [listenerName(), new URL(made.options.url!).pathname.slice(1)])
      await until('the listener to leave', async () => (await left()).rows[0].n === 0)
    } finally {
      made.drop()
    }
  })

  it('a store closed while its listener is still connecting ends it too', async () => {
    const made = await reopenableStore()
    try {
      let c: Store | undefined
      const opening = await timeOf(async () => {
        c = await openStore(made.options)
      })
      expect(await timeOf(() => c!.close())).toBeLessThan(scaledBound(5_000, opening, 5))
      // Every connection of the store, the listener's included, leaves (at once, or as its attempt ends).
      const left = () => admin.query('select count(*)::int as n from pg_stat_activity where datname = $1', [new URL(made.options.url!).pathname.slice(1)])
      await until('every connection to leave', async () => (await left()).rows[0].n === 0)
    } finally {
      made.drop()
    }
  })

  it('the triggers fire for raw SQL too', async () => {
    const before = storeVersion(b.db)!
    await sql`update members set active = active where id = -1`.execute(a.db)
    await admin.query(`update clients set name = 'Renamed' where id = 'c1'`)
    await until('the raw update to be heard', () => storeVersion(b.db) !== before)
  })
})
