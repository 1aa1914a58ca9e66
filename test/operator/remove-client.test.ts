import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {AppError} from '../../src/errors.js'
import {insertCode, rememberConsent} from '../../src/grants/repository.js'
import {issueApiKey} from '../../src/interfaces/conversations/keys.js'
import {pushProject} from '../../src/interfaces/partner/service.js'
import {insertPulse} from '../../src/interfaces/pulse/repository.js'
import {issueToken} from '../../src/interfaces/signon/issue-token.js'
import {ManualClock} from '../../src/lib/clock.js'
import {clientDependents, removeClient} from '../../src/operator/queries.js'
import {addMember} from '../../src/registry/service.js'
import type {Store} from '../../src/store/db.js'
import {registerTestClient} from '../helpers/clients.js'
import {rejectionOf} from '../helpers/rejection.js'
import {openTestStore} from '../helpers/store.js'

/*
 * remove-client over every owner that keeps rows for a client (grants, interfaces E, D and B):
 * what it counts, that it refuses without --force and changes nothing then, and what goes with
 * --force while another client's rows and the delivered history stay.
 */

let clock: ManualClock
let store: Store
let db: Store['db']
let held: string
let other: string

const partnerClient = (name: string) =>
  registerTestClient(
    store,
    {
      name,
      grants: ['signon', 'conversations', 'pulses', 'partner'],
      redirect_uris: ['https://app.example/callback'],
      partner_url: `http://${name.toLowerCase()}.test`,
      allow_insecure_partner_url: true,
      partner_username: 'medpanel',
      partner_password: `pw-${name}`,
    },
    clock.now(),
  )

async function pulseOf(clientId: string, id: string): Promise<void> {
  const stamp = clock.now().toISOString()
  await insertPulse(db, {
    id,
    client_id: clientId,
    title: 'Pulse',
    internal_title: 'Pulse',
    identifier: null,
    start_date: null,
    end_date: null,
    fielding_time: '00:10',
    external_introduction: '',
    status: 'Draft',
    last_updated: stamp,
    created_at: stamp,
  })
}

/** A member with a token, a code and a consent for the held client. */
async function credentials(): Promise<void> {
  const member = await addMember(
    db,
    {email: 'ana@clinic.example', password: 'long-enough-password', first_name: 'Ana', last_name: 'Ruiz', country: 'US', specialty: 'Oncology'},
    clock.now(),
  )
  await issueToken(db, member.user_id, held, clock.now())
  const stamp = clock.now().toISOString()
  await insertCode(db, {
    code_hash: 'code-hash-1',
    client_id: held,
    member_id: member.user_id,
    redirect_uri: 'https://app.example/callback',
    scopes: 'openid',
    code_challenge: null,
    expires_at: stamp,
    used_at: null,
    superseded_at: null,
    created_at: stamp,
  })
  await rememberConsent(db, member.user_id, held, ['openid'], stamp)
}

/** P1 (delivered to the held client), P2 (failed to it, pending to the other), P3 (pending to it). */
async function projects(): Promise<void> {
  const push = (id: string, partners: string[]) =>
    pushProject(db, {project_id: id, name: `Study ${id}`, duration: 20, status: 'active', project_type: 'custom'}, {partners}, clock.now())
  await push('P1', [held])
  await db.updateTable('partner_deliveries').set({status: 'delivered', delivered_at: clock.now().toISOString()}).where('project_id', '=', 'P1').execute()
  await push('P2', [held, other])
  await db.updateTable('partner_deliveries').set({status: 'failed'}).where('project_id', '=', 'P2').where('client_id', '=', held).execute()
  await push('P3', [held])
}

async function count(table: 'access_tokens' | 'authorization_codes' | 'consents' | 'conversation_api_keys' | 'pulses', clientId: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function everything(clientId: string) {
  const deliveries = await db.selectFrom('partner_deliveries').select(['project_id', 'status']).where('client_id', '=', clientId).orderBy('seq').execute()
  const projects = await db.selectFrom('partner_projects').select(['project_id', 'partner_ids']).orderBy('project_id').execute()
  return {
    tokens: await count('access_tokens', clientId),
    codes: await count('authorization_codes', clientId),
    consents: await count('consents', clientId),
    keys: await count('conversation_api_keys', clientId),
    pulses: await count('pulses', clientId),
    deliveries: deliveries.map((d) => `${d.project_id} ${d.status}`),
    projects: projects.map((p) => `${p.project_id} ${p.partner_ids}`),
    client: (await db.selectFrom('clients').select('id').where('id', '=', clientId).executeTakeFirst()) !== undefined,
  }
}

beforeEach(async () => {
  clock = new ManualClock('2026-01-15T12:00:00.000Z')
  store = await openTestStore()
  db = store.db
  held = (await partnerClient('Held')).client_id
  other = (await partnerClient('Other')).client_id
  await credentials()
  await issueApiKey(db, {client_id: held}, clock.now())
  await issueApiKey(db, {client_id: other}, clock.now())
  await pulseOf(held, '00000000-0000-4000-8000-000000000001')
  await pulseOf(held, '00000000-0000-4000-8000-000000000002')
  await pulseOf(other, '00000000-0000-4000-8000-000000000003')
  await projects()
})
afterEach(async () => store.close())

describe('remove-client', () => {
  it('counts what every owner keeps for the client, in the order it names them', async () => {
    const dependents = await clientDependents(db, held)
    expect(dependents).toEqual({access_tokens: 1, authorization_codes: 1, api_keys: 1, pulses: 2, undelivered_deliveries: 2, partner_projects: 3})
    expect(Object.keys(dependents)).toEqual(['access_tokens', 'authorization_codes', 'api_keys', 'pulses', 'undelivered_deliveries', 'partner_projects'])
    expect(await clientDependents(db, other)).toEqual({access_tokens: 0, authorization_codes: 0, api_keys: 1, pulses: 1, undelivered_deliveries: 1, partner_projects: 1})
  })

  it('refuses without force, naming what depends on the client, and changes nothing', async () => {
    const before = {held: await everything(held), other: await everything(other)}
    const error = await rejectionOf(removeClient(db, held, false), AppError)
    expect({code: error.code, message: error.message}).toEqual({
      code: 'conflict',
      message: `client ${held} still has 1 access token, 1 authorization code, 1 API key, 2 pulses, 2 undelivered partner deliveries, 3 partner projects listing it; remove-client --force removes them with it`,
    })
    expect({held: await everything(held), other: await everything(other)}).toEqual(before)
    expect(before.held.client).toBe(true)
  })

  it('with force removes it and what every owner keeps for it, and leaves the other client and the delivered history', async () => {
    const otherBefore = await everything(other)
    expect(await removeClient(db, held, true)).toEqual({
      client_id: held,
      removed: {access_tokens: 1, authorization_codes: 1, api_keys: 1, pulses: 2, undelivered_deliveries: 2, partner_projects: 3},
    })
    expect(await everything(held)).toEqual({
      tokens: 0,
      codes: 0,
      consents: 0,
      keys: 0,
      pulses: 0,
      deliveries: ['P1 delivered'],
      projects: ['P1 []', `P2 ["${other}"]`, 'P3 []'],
      client: false,
    })
    expect(await everything(other)).toEqual({...otherBefore, projects: ['P1 []', `P2 ["${other}"]`, 'P3 []']})
    await expect(removeClient(db, held, true)).rejects.toThrow(`no client with id "${held}"`)
  })

  it('removes a client nothing depends on without force', async () => {
    const bare = (await registerTestClient(store, {name: 'Bare', grants: ['balance']}, clock.now())).client_id
    expect(await removeClient(db, bare, false)).toEqual({
      client_id: bare,
      removed: {access_tokens: 0, authorization_codes: 0, api_keys: 0, pulses: 0, undelivered_deliveries: 0, partner_projects: 0},
    })
    expect((await everything(bare)).client).toBe(false)
  })
})
