import {join} from 'node:path'
import {afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {isStoredId, isUuid, MAX_STORED_ID, storedIdOf} from '../../../src/lib/ids.js'
import {findMember, findMemberBy} from '../../../src/registry/repository.js'
import {freshApp, type TestContext} from '../../helpers/app.js'
import {cli, cliJson, tempDir} from '../../helpers/cli.js'
import {AUTH, PAYPAL_DETAILS, seedClients, seedMember} from './setup.js'

/*
 * An id past what the integer id column holds (PostgreSQL's `integer` is 32-bit) names nobody:
 * a plain not-found on SQLite and PostgreSQL alike, never a store error. The suite runs on
 * PostgreSQL too when MEDPANEL_TEST_DATABASE_URL is set (helpers/store.ts).
 */
const OUT_OF_RANGE = ['987654321987', String(MAX_STORED_ID + 1), '9007199254740993', '1'.repeat(300)]

describe('stored ids', () => {
  it('takes decimal digits from 1 to the integer column maximum, nothing else', () => {
    expect(MAX_STORED_ID).toBe(2_147_483_647) // PostgreSQL's integer
    expect(storedIdOf('1')).toBe(1)
    expect(storedIdOf(' 042 ')).toBe(42)
    expect(storedIdOf(String(MAX_STORED_ID))).toBe(MAX_STORED_ID)
    for (const bad of ['', '0', '-1', '+1', '1.0', '1e3', '0x10', 'abc', '１', ...OUT_OF_RANGE]) expect(storedIdOf(bad), bad).toBeUndefined()
    expect(isStoredId(MAX_STORED_ID + 1)).toBe(false)
    expect(isStoredId(1.5)).toBe(false)
    expect(isUuid('0b7e7c1e-8f5a-4c53-9a55-0c2f5d1d1a10')).toBe(true)
    expect(isUuid('0B7E7C1E-8F5A-4C53-9A55-0C2F5D1D1A10')).toBe(true)
    for (const bad of ['nope', '0b7e7c1e-8f5a-4c53-9a55-0c2f5d1d1a10x', '0b7e7c1e8f5a4c539a550c2f5d1d1a10', '']) expect(isUuid(bad), bad).toBe(false)
  })
})

describe('an id out of the integer range over HTTP', () => {
  let ctx: TestContext
  let member: Awaited<ReturnType<typeof seedMember>>

  beforeEach(async () => {
    ctx = await freshApp()
    await seedClients(ctx.store, ctx.clock.now())
    member = await seedMember(ctx.db, ctx.clock.now())
  })
  afterEach(async () => ctx.store.close())

  const expectNotFound = async (res: Response, what: string) => {
    expect(res.status, what).toBe(404)
    const body = (await res.json()) as {message: string}
    expect(Object.keys(body)).toEqual(['message'])
    return body.message
  }

  it('is a 404 in C shape on every account path, as an unknown id in range is', async () => {
    for (const id of [...OUT_OF_RANGE, String(MAX_STORED_ID)]) {
      for (const tail of ['summary', 'transactions', 'withdrawal_types']) {
        const message = await expectNotFound(await ctx.app.request(`/balance/user_id/${id}/${tail}`, {headers: AUTH}), `${id} ${tail}`)
        expect(message).toMatch(/^no account for user_id \d+…?$/)
      }
      const res = await ctx.app.request(`/balance/user_id/${id}/withdrawals`, {
        method: 'POST',
        headers: {...AUTH, 'content-type': 'application/json'},
        body: JSON.stringify({type: 'PAYPAL', amount: 10, member_details: PAYPAL_DETAILS}),
      })
      await expectNotFound(res, `${id} withdrawals`)
    }
    expect(await expectNotFound(await ctx.app.request('/balance/user_id/987654321987/summary', {headers: AUTH}), 'message')).toBe('no account for user_id 987654321987')
    // The member that exists is still reached.
    expect((await ctx.app.request(`/balance/user_id/${member.user_id}/summary`, {headers: AUTH})).status).toBe(200)
    expect(ctx.logs.filter((line) => line.startsWith('error'))).toEqual([])
  })

  it('finds nobody by such an id in the registry either', async () => {
    expect(await findMember(ctx.db, 987654321987)).toBeUndefined()
    expect(await findMemberBy(ctx.db, 'id', MAX_STORED_ID + 1)).toBeUndefined()
    expect(await findMember(ctx.db, member.user_id)).toBeDefined()
  })

  it('answers a transaction id that is not a UUID with a plain 404', async () => {
    for (const id of ['nope', '123', '0b7e7c1e-8f5a-4c53-9a55-0c2f5d1d1a10x', 'a'.repeat(3000)]) {
      const message = await expectNotFound(await ctx.app.request(`/balance/transactions/${id}`, {headers: AUTH}), id.slice(0, 40))
      expect(message.length).toBeLessThan(120)
      expect(message).toMatch(/^no transaction with id "/)
    }
    await expectNotFound(await ctx.app.request('/balance/transactions/0b7e7c1e-8f5a-4c53-9a55-0c2f5d1d1a10', {headers: AUTH}), 'unknown uuid')
  })
})

describe('an id out of the integer range on the command line', () => {
  // One store with one member for all: every command here is refused, so none changes it.
  const store = ['--db', join(tempDir(), 'ids.db')]
  beforeAll(() => {
    cliJson(
      ['add-member', '--email', 'ids@example.com', '--password', 'long enough pw', '--first-name', 'Ida', '--last-name', 'Ng', '--country', 'US', '--specialty', 'Oncology'].concat(
        store,
      ),
    )
  })

  const id = '987654321987'
  // One test per command that takes a member id.
  for (const args of [
    ['show-member', id],
    ['update-member', id, '--deactivate'],
    // The member is looked up before the client.
    ['revoke-consent', id, '--client', 'nobody'],
    ['show-balance', 'user_id', id],
    ['list-transactions', 'user_id', id],
    ['credit', 'user_id', id, '--amount', '5'],
    ['debit', 'user_id', id, '--amount', '5'],
    ['withdraw', 'user_id', id, '--type', 'PAYPAL', '--amount', '5'],
    ['restrict-withdrawal-type', 'user_id', id, '--type', 'CHECK'],
    ['list-withdrawal-types', 'user_id', id],
  ]) {
    it(`is one Error: line naming nobody and exit 1: ${args.join(' ')}`, () => {
      const run = cli([...args, ...store])
      expect(run.status, `${args.join(' ')}: ${run.stderr}`).toBe(1)
      const lines = run.stderr.trim().split('\n')
      expect(lines, args.join(' ')).toHaveLength(1)
      expect(lines[0], args.join(' ')).toMatch(new RegExp(`^Error: no (member|account) (with|for) user_id ${id}$`))
    })
  }

  it('is one Error: line naming no transaction for a transaction id that is no UUID', () => {
    const update = cli(['update-transaction', 'not-a-uuid', '--status', 'Completed', ...store])
    expect(update.status).toBe(1)
    expect(update.stderr.trim()).toBe('Error: no transaction with id "not-a-uuid"')
  })
})
