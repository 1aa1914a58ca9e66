import {sql} from 'kysely'
import {afterEach, describe, expect, it} from 'vitest'
import {toAppError} from '../../../src/http/error-shape.js'
import {openStore} from '../../../src/schema.js'
import type {Store} from '../../../src/store/db.js'
import {hostSelection} from '../../../src/store/handle.js'
import {freePort} from '../../helpers/cli.js'
import {freshDatabaseUrl, onPostgres} from '../../helpers/store.js'

/*
 * A store on a URL of several hosts (src/store/postgres/hosts.ts), against the run's one real
 * server and a port where nothing listens: connections find the server that fits, a connection
 * whose server turned read-only (as a demoted primary does) is dropped rather than reused, and no
 * server that fits is a 503, after which the store recovers by itself.
 */
describe.skipIf(!onPostgres)('a store on a multi-host URL', () => {
  let store: Store | undefined
  afterEach(async () => {
    await store?.close()
    store = undefined
  })

  /** The test database's URL with a dead host in front of it, and target_session_attrs. */
  async function multiHost(attrs: string): Promise<{url: string; port: number}> {
    const real = new URL(await freshDatabaseUrl())
    const dead = await freePort()
    real.searchParams.set('target_session_attrs', attrs)
    const url = real.toString().replace(`@${real.host}`, `@127.0.0.1:${dead},${real.host}`)
    return {url, port: Number(real.port)}
  }

  it('skips a host that refuses, writes to the one that fits, and is 503 when none fits', async () => {
    const {url, port} = await multiHost('read-write')
    store = await openStore({url})
    expect(hostSelection(store.db)?.current?.port).toBe(port)
    const {rows} = await sql<{port: number}>`select inet_server_port() as port`.execute(store.db)
    expect(rows[0]!.port).toBe(port)

    await store.close()
    store = undefined
    // The only server is a primary: a URL asking for a standby finds none.
    const standby = await openStore({url: url.replace('read-write', 'standby')}).then(
      async (opened) => {
        await opened.close()
        return 'opened'
      },
      (error: unknown) => error,
    )
    expect(standby instanceof Error ? standby.message : standby).toMatch(
      /^cannot open the PostgreSQL store .*: no server of the database URL is of the kind asked for \(target_session_attrs=standby\) \(127\.0\.0\.1:\d+: connect ECONNREFUSED .*; 127\.0\.0\.1:\d+ is a primary\)$/,
    )
    // A store already open (serve, mid-failover) answers 503 with Retry-After, in no internal words.
    store = await openStore({url: url.replace('read-write', 'standby'), inspect: true})
    const query = await sql`select 1`.execute(store.db).catch((error: unknown) => error)
    const answer = toAppError(query)
    expect([answer.status, answer.headers['Retry-After'], answer.message]).toEqual([503, '30', 'the store cannot take this request right now; nothing was changed'])
  })

  it('drops a connection whose server turned read-only, and finds a writable one again without a restart', async () => {
    const {url} = await multiHost('read-write')
    store = await openStore({url, poolSize: 1})
    const db = store.db
    await sql`create table failover_probe (n int)`.execute(db)
    // The pool's one connection now behaves as on a demoted primary: every write is refused (25006).
    await sql`set default_transaction_read_only = on`.execute(db)
    const refused = await sql`insert into failover_probe values (1)`.execute(db).catch((error: unknown) => error)
    expect((refused as {code?: string}).code).toBe('25006')
    const answer = toAppError(refused)
    expect([answer.status, answer.headers['Retry-After']]).toEqual([503, '30'])
    // That connection is gone: the next write runs on a new one, which the server takes.
    await sql`insert into failover_probe values (2)`.execute(db)
    const {rows} = await sql<{n: number}>`select n from failover_probe`.execute(db)
    expect(rows).toEqual([{n: 2}])
  })
})
