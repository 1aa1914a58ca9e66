import {Decimal} from 'decimal.js'
import {userInfo} from 'node:os'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {audited, osUser, pageAudit, recordAudit, withoutSecrets} from '../../src/operator/audit.js'
import type {Store} from '../../src/store/db.js'
import {rejectionOf} from '../helpers/rejection.js'
import {openTestStore} from '../helpers/store.js'

/*
 * The audit trail's own rules, in process: what counts as a secret and is never written, that a
 * change and its record commit together or not at all, and how a page of the trail is chosen.
 * test/commands/audit.test.ts checks every kind of command through the CLI.
 */

describe('what the trail keeps of the fields a command set', () => {
  it('keeps a secret-named field only as "(changed)", at any depth, and a removed one as it is', () => {
    const kept = withoutSecrets({
      password: 'hunter2 hunter2',
      client_secret: 'cs-123',
      partner_password: 'pp-123',
      signing_secret: null,
      access_token: 'at-123',
      api_key: 'mpk_123',
      store_key: 'AAAA',
      secret_hash: 'abc',
      nested: {refresh_token: 'rt-123', list: [{password: 'in a list'}]},
      cleared_secret: false,
    })
    expect(kept).toEqual({
      password: '(changed)',
      client_secret: '(changed)',
      partner_password: '(changed)',
      signing_secret: null,
      access_token: '(changed)',
      api_key: '(changed)',
      store_key: '(changed)',
      secret_hash: '(changed)',
      nested: {refresh_token: '(changed)', list: [{password: '(changed)'}]},
      cleared_secret: false,
    })
  })

  it('leaves fields that only mention a secret as they are, and money whole', () => {
    const amount = new Decimal('0.10')
    const kept = withoutSecrets({token_ttl: 3600, revoked_tokens: 2, key_id: 'k1', retired_key_ids: ['k0'], signs_deliveries: true, amount, secrets_resealed: 3})
    expect(kept).toEqual({token_ttl: 3600, revoked_tokens: 2, key_id: 'k1', retired_key_ids: ['k0'], signs_deliveries: true, amount, secrets_resealed: 3})
    expect((kept as {amount: unknown}).amount).toBe(amount)
  })

  it('names the user this process runs as', () => {
    expect(osUser()).toBe(userInfo().username)
  })
})

describe('a change and its record', () => {
  let store: Store
  beforeEach(async () => {
    store = await openTestStore()
  })
  afterEach(async () => store.close())

  const run = () => ({command: 'test-command', os_user: 'alice', at: new Date('2026-03-01T10:00:00Z')})
  const settings = async () => (await store.db.selectFrom('settings').select('key').where('key', 'like', 'audit-test-%').execute()).map((r) => r.key)
  const rows = async () => store.db.selectFrom('operator_audit').selectAll().execute()

  it('commit together: the change made and its row written, secrets out of it, money a number from its exact text', async () => {
    await audited(
      store,
      run,
      async ({db}) => db.insertInto('settings').values({key: 'audit-test-a', value: 'x'}).execute(),
      () => ({kind: 'store', target: 'audit-test-a', changes: {value: 'x', password: 'never written', amount: new Decimal('1000000000.10')}}),
    )
    expect(await settings()).toEqual(['audit-test-a'])
    expect(await rows()).toEqual([
      {
        id: expect.anything(),
        at: '2026-03-01T10:00:00.000Z',
        os_user: 'alice',
        command: 'test-command',
        target_kind: 'store',
        target: 'audit-test-a',
        changes: '{"value":"x","password":"(changed)","amount":1000000000.1}',
      },
    ])
    expect((await pageAudit(store.db, {limit: 1, offset: 0})).rows[0]!.changes).toEqual({value: 'x', password: '(changed)', amount: 1000000000.1})
  })

  it('are both left out when the change fails, and when saying what it changed fails', async () => {
    const failing = audited(
      store,
      run,
      async ({db}) => {
        await db.insertInto('settings').values({key: 'audit-test-b', value: 'x'}).execute()
        throw new Error('refused half way')
      },
      () => ({kind: 'store', target: 'audit-test-b', changes: {}}),
    )
    expect((await rejectionOf(failing, Error)).message).toBe('refused half way')
    const noteFails = audited(
      store,
      run,
      async ({db}) => db.insertInto('settings').values({key: 'audit-test-c', value: 'x'}).execute(),
      () => {
        throw new Error('no note')
      },
    )
    expect((await rejectionOf(noteFails, Error)).message).toBe('no note')
    expect(await settings()).toEqual([])
    expect(await rows()).toEqual([])
  })
})

describe('a page of the trail', () => {
  let store: Store
  afterEach(async () => store.close())

  beforeEach(async () => {
    store = await openTestStore()
    const entries: [at: string, user: string, command: string, kind: 'client' | 'member', target: string][] = [
      ['2026-01-10T09:00:00Z', 'alice', 'register-client', 'client', 'alpha'],
      ['2026-01-31T23:59:59Z', 'bob', 'add-member', 'member', '1'],
      ['2026-02-01T00:00:00Z', 'alice', 'update-client', 'client', 'alpha'],
      ['2026-02-15T12:00:00Z', 'uid:61234', 'update-member', 'member', '1'],
    ]
    for (const [at, user, command, kind, target] of entries) await recordAudit(store.db, {command, os_user: user, at: new Date(at)}, {kind, target, changes: {n: at}})
  })

  const commands = async (ask: Parameters<typeof pageAudit>[1]) => {
    const page = await pageAudit(store.db, ask)
    return {commands: page.rows.map((r) => r.command), total: page.total}
  }

  it('is newest first, each filter narrowing it, and counts what matches beyond the page', async () => {
    const all = {limit: 100, offset: 0}
    expect(await commands(all)).toEqual({commands: ['update-member', 'update-client', 'add-member', 'register-client'], total: 4})
    expect(await commands({...all, target: 'alpha'})).toEqual({commands: ['update-client', 'register-client'], total: 2})
    expect(await commands({...all, kind: 'member'})).toEqual({commands: ['update-member', 'add-member'], total: 2})
    expect(await commands({...all, user: 'uid:61234'})).toEqual({commands: ['update-member'], total: 1})
    expect(await commands({...all, command: 'add-member'})).toEqual({commands: ['add-member'], total: 1})
    expect(await commands({limit: 1, offset: 1})).toEqual({commands: ['update-client'], total: 4})
  })

  it('takes --since inclusive and --until exclusive', async () => {
    const all = {limit: 100, offset: 0}
    expect(await commands({...all, since: '2026-02-01T00:00:00.000Z'})).toEqual({commands: ['update-member', 'update-client'], total: 2})
    expect(await commands({...all, until: '2026-02-01T00:00:00.000Z'})).toEqual({commands: ['add-member', 'register-client'], total: 2})
    expect(await commands({...all, since: '2026-01-31T00:00:00.000Z', until: '2026-02-15T12:00:00.000Z'})).toEqual({commands: ['update-client', 'add-member'], total: 2})
  })
})
