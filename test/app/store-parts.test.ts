import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {issueToken} from '../../src/interfaces/signon/issue-token.js'
import {ManualClock} from '../../src/lib/clock.js'
import {addMember} from '../../src/registry/service.js'
import {openStore} from '../../src/schema.js'
import {narrow, narrowParts} from '../../src/store/database.js'
import type {Store} from '../../src/store/db.js'
import {keyFileOf} from '../../src/store/secrets.js'
import {tempDir} from '../helpers/cli.js'
import {registerTestClient} from '../helpers/clients.js'
import {onPostgres, openTestStore} from '../helpers/store.js'

/*
 * The store's read-only connection and its keys are fields of the Store that openStore returns,
 * handed down by whoever opened it; no service looks them up from a connection. These tests
 * hold the app to that: what it is handed is what it uses.
 */

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

async function open(...args: Parameters<typeof openStore>): Promise<Store> {
  const store = await openStore(...args)
  opened.push(store)
  return store
}

describe.skipIf(onPostgres)('a SQLite store as openStore returns it', () => {
  it('reads through its own connection unless it was opened with a read-only one', async () => {
    const file = join(tempDir(), 'parts.db')
    const plain = await open({file})
    expect(plain.reader).toBe(plain.db)
    const serving = await open({file, reader: true})
    expect(serving.reader).not.toBe(serving.db)
    // The reader sees what the writer committed, and cannot write.
    await serving.db.insertInto('settings').values({key: 'seen-by-reader', value: 'yes'}).execute()
    expect(await serving.reader.selectFrom('settings').select('value').where('key', '=', 'seen-by-reader').executeTakeFirst()).toEqual({value: 'yes'})
    await expect(serving.reader.insertInto('settings').values({key: 'no', value: 'no'}).execute()).rejects.toThrow(/readonly/i)
  })

  it('holds its keys: the key file beside it, loaded once', async () => {
    const file = join(tempDir(), 'keys.db')
    const store = await open({file})
    const keys = store.keys
    expect(keys.source).toEqual({kind: 'file', path: keyFileOf(file)})
    expect(existsSync(keyFileOf(file))).toBe(true)
    expect(store.keys).toBe(keys)
  })
})

describe('an app over the store parts it is handed', () => {
  const clock = new ManualClock()

  /** A member's access token that only `holder` knows. */
  async function tokenIn(holder: Store): Promise<string> {
    const client = await registerTestClient(narrowParts(holder), {name: 'Reader Co', redirect_uris: ['https://reader.example/cb']}, clock.now())
    const member = await addMember(
      narrow(holder.db),
      {email: 'rita@clinic.example', password: 'a long enough password', first_name: 'Rita', last_name: 'Moss', country: 'US', specialty: 'Oncology'},
      clock.now(),
    )
    return (await issueToken(narrow(holder.db), member.user_id, client.client_id, clock.now())).access_token
  }

  it('answers token info from the reader it was given, not from its connection', async () => {
    const primary = await openTestStore()
    const elsewhere = await openTestStore()
    opened.push(primary, elsewhere)
    const token = await tokenIn(elsewhere)
    const info = (store: {db: Store['db']; reader: Store['db']; keys: Store['keys']}) =>
      createApp({store, clock, log: () => undefined, metrics: false}).request('/oauth/token/info', {headers: {authorization: `Bearer ${token}`}})
    // The token exists only where the reader points: found there, unknown on the connection itself.
    expect((await info({db: primary.db, reader: elsewhere.db, keys: primary.keys})).status).toBe(200)
    expect((await info(primary)).status).toBe(401)
  })

  it('derives its sign-in cookies from the keys it was given', async () => {
    const store = await openTestStore()
    opened.push(store)
    let reads = 0
    const parts = {
      db: store.db,
      reader: store.reader,
      get keys() {
        reads++
        return store.keys
      },
    }
    const app = createApp({store: parts, clock, log: () => undefined, metrics: false})
    expect(reads).toBe(0)
    // The applications page sets its CSRF cookie, signed with a key derived from the store's.
    const page = await app.request('/oauth/authorized_applications')
    expect(page.status).toBe(200)
    expect(page.headers.get('set-cookie')).toBeTruthy()
    expect(reads).toBeGreaterThan(0)
  })
})
