import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../../src/errors.js'
import {encodeId, enqueue, listDeliveries, paths, resolvePartners} from '../../../src/interfaces/partner/outbox.js'
import {pushProject} from '../../../src/interfaces/partner/service.js'
import {DeliveryWorker} from '../../../src/interfaces/partner/worker.js'
import {ManualClock} from '../../../src/lib/clock.js'
import {registerClient} from '../../../src/registry/service.js'
import type {Store} from '../../../src/store/db.js'
import {rejectionOf} from '../../helpers/rejection.js'
import {FakeTransport, partnerStore, projectInput} from './helpers.js'
import {registerTestClient} from '../../helpers/clients.js'

/*
 * Which partners a change is queued for, what queueing answers, and the ids allowed in a
 * partner's paths. Found by mutation testing the outbox (docs/architecture.md, "Mutation
 * testing"); expected values are written out.
 */

let clock: ManualClock
let store: Store
let db: Store['db']
let partners: string[]

beforeEach(async () => {
  clock = new ManualClock('2026-01-15T12:00:00.000Z')
  ;({store, db, clientIds: partners} = await partnerStore(clock, 2))
})
afterEach(async () => store.close())

const signOnClient = async () =>
  (await registerTestClient(store, {name: 'Sign-on only', grants: ['signon'], redirect_uris: ['https://app.example/callback']}, clock.now())).client_id
const refusal = async (promise: Promise<unknown>) => {
  const error = await rejectionOf(promise, AppError)
  return {code: error.code, message: error.message}
}

describe('the partners of a change', () => {
  it('are, unless named, every client with the partner grant and a URL, oldest first, expired ones left out', async () => {
    await signOnClient()
    clock.advance(1)
    const late = await registerClient(
      store,
      {
        name: 'Late partner',
        url: 'https://late.example',
        logo_url: 'https://late.example/logo.png',
        grants: ['partner'],
        partner_url: 'http://late.test',
        allow_insecure_partner_url: true,
        partner_username: 'medpanel',
        partner_password: 'pw-late',
      },
      clock.now(),
    )
    expect(await resolvePartners(db, undefined)).toEqual([...partners, late.client_id])
    expect(await resolvePartners(db, [])).toEqual([...partners, late.client_id])
    await db.updateTable('clients').set({expired_at: clock.now().toISOString()}).where('id', '=', late.client_id).execute()
    expect(await resolvePartners(db, undefined)).toEqual(partners)
    await db.updateTable('clients').set({partner_url: null}).where('id', '=', partners[1]!).execute()
    expect(await resolvePartners(db, undefined)).toEqual([partners[0]])
  })

  it('are, when named, each named one once, in the order named; a client without the grant or a URL is refused by name', async () => {
    const [a, b] = partners as [string, string]
    expect(await resolvePartners(db, [b, a, b])).toEqual([b, a])
    const plain = await signOnClient()
    expect(await refusal(resolvePartners(db, [a, plain]))).toEqual({code: 'bad_request', message: `partner: client "${plain}" has no partner grant and URL`})
    await db.updateTable('clients').set({partner_url: null}).where('id', '=', b).execute()
    expect(await refusal(resolvePartners(db, [b]))).toEqual({code: 'bad_request', message: `partner: client "${b}" has no partner grant and URL`})
  })
})

describe('queueing', () => {
  it('skips a partner id that names no client and answers the ids of the rows it queued', async () => {
    const push = {kind: 'project' as const, method: 'PUT' as const, path: paths.project('P9'), quotaId: null, body: '{}'}
    const ids = await enqueue(db, 'P9', ['no-such-client', partners[0]!], [push, {...push, method: 'DELETE' as const, body: null}], clock.now())
    const queued = await listDeliveries(db, {})
    expect(ids).toHaveLength(2)
    expect(queued.map((d) => [d.id, d.client_id, d.method])).toEqual([
      [ids[0], partners[0], 'PUT'],
      [ids[1], partners[0], 'DELETE'],
    ])
  })

  it('logs an attempt of a row queued without a request id with no id at the end', async () => {
    await pushProject(db, projectInput(), {partners: [partners[0]!]}, clock.now())
    const lines: string[] = []
    await new DeliveryWorker({db, keys: store.keys, clock, transport: new FakeTransport(), log: (line) => lines.push(line)}).drain()
    expect(lines).toEqual([expect.stringMatching(/^delivery [0-9a-f-]{36} PUT \/v1\/projects\/P1 -> delivered \(200\)$/)])
  })
})

describe('ids in a partner path', () => {
  it('refuses a dot segment, naming it, and escapes everything else', () => {
    for (const id of ['.', '..']) {
      let error: unknown
      try {
        encodeId(id)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(AppError)
      expect((error as AppError).code).toBe('bad_request')
      expect((error as AppError).message).toBe(`"${id}" cannot be used as an id in a partner path`)
    }
    expect(encodeId('a.b')).toBe('a.b')
    expect(encodeId('...')).toBe('...')
    expect(encodeId('a/b c')).toBe('a%2Fb%20c')
  })
})
