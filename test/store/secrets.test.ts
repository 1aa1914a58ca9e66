import {sql} from 'kysely'
import {copyFileSync, existsSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {DeliveryWorker} from '../../src/interfaces/partner/worker.js'
import {pushProject} from '../../src/interfaces/partner/service.js'
import {ManualClock} from '../../src/lib/clock.js'
import {registerClient} from '../../src/registry/service.js'
import {openStore} from '../../src/schema.js'
import type {Store} from '../../src/store/db.js'
import {narrow} from '../../src/store/database.js'
import {cliJson, tempDir} from '../helpers/cli.js'
import {FakeTransport} from '../interfaces/partner/helpers.js'
import {basicAuth} from '../helpers/http-basic.js'

const PASSWORD = 'partner-password-in-the-clear'
const SIGNING = 'signing-secret-in-the-clear-0123'
const basic = basicAuth('acme', PASSWORD)

async function partnerClient(store: Store, clock: ManualClock): Promise<string> {
  const client = await registerClient(
    store,
    {
      name: 'Acme',
      url: 'https://acme.example',
      logo_url: 'https://acme.example/l.png',
      grants: ['partner'],
      partner_url: 'http://127.0.0.1:9',
      partner_username: 'acme',
      partner_password: PASSWORD,
      signing_secret: SIGNING,
    },
    clock.now(),
  )
  return client.client_id
}

const enqueueProject = (db: Store['db'], clientId: string, projectId: string, now: Date) =>
  pushProject(db, {project_id: projectId, name: 'Sealed study', duration: 10, status: 'active', project_type: 'custom'}, {partners: [clientId]}, now)

/** Pushes one project for the client and delivers it through a fake partner; returns what was sent. */
async function deliverOne(store: Store, clock: ManualClock, clientId: string, projectId: string) {
  await enqueueProject(store.db, clientId, projectId, clock.now())
  const transport = new FakeTransport()
  await new DeliveryWorker({db: store.db, keys: store.keys, clock, transport}).drain({now: true, projectIds: [projectId]})
  return transport.requests
}

describe('secrets sealed under a key outside the database', () => {
  const stores: Store[] = []
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close()
  })

  it('creates the store, its WAL and its key file readable by the owner only', async () => {
    const file = join(tempDir(), 'private.db')
    const store = await openStore({file})
    stores.push(store)
    await partnerClient(store, new ManualClock())
    for (const path of [file, `${file}-wal`, `${file}-shm`, `${file}.key`]) {
      expect(existsSync(path), path).toBe(true)
      expect(statSync(path).mode & 0o777, path).toBe(0o600)
    }
  })

  it('keeps partner credentials out of the database file, and sends them to the partner all the same', async () => {
    const file = join(tempDir(), 'sealed.db')
    const clock = new ManualClock()
    const store = await openStore({file})
    stores.push(store)
    const clientId = await partnerClient(store, clock)
    const stored = (await sql<{partner_password: string; signing_secret: string}>`select partner_password, signing_secret from clients`.execute(store.db)).rows[0]!
    expect(stored.partner_password).toMatch(/^sealed:v1:[0-9a-f]{12}:/)
    expect(stored.signing_secret).toMatch(/^sealed:v1:[0-9a-f]{12}:/)
    const bytes = Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`)]).toString('latin1')
    expect(bytes).not.toContain(PASSWORD)
    expect(bytes).not.toContain(SIGNING)

    const [sent] = await deliverOne(store, clock, clientId, 'P-1')
    expect(sent!.headers.authorization).toBe(basic)
    expect(sent!.headers['x-medpanel-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
  })

  it('a copy of the database without its key cannot open the secrets, and says why', async () => {
    const dir = tempDir()
    const clock = new ManualClock()
    const original = await openStore({file: join(dir, 'original.db')})
    const clientId = await partnerClient(original, clock)
    await original.close()
    const thief = join(tempDir(), 'copy.db')
    copyFileSync(join(dir, 'original.db'), thief)
    const copy = await openStore({file: thief})
    stores.push(copy)
    await enqueueProject(copy.db, clientId, 'P-2', clock.now())
    const transport = new FakeTransport()
    const logs: string[] = []
    await new DeliveryWorker({db: narrow(copy.db), keys: copy.keys, clock, transport, log: (line) => logs.push(line)})
      .drain({now: true, projectIds: ['P-2']})
      .catch((error: Error) => logs.push(error.message))
    expect(transport.requests).toHaveLength(0)
    expect(logs.join('\n')).toMatch(/sealed with key [0-9a-f]{12}, which this process does not have/)
  })

  it('rotate-secret-key re-seals every secret under a new key and retires the old one', async () => {
    const file = join(tempDir(), 'rotate.db')
    const clock = new ManualClock()
    const store = await openStore({file})
    const clientId = await partnerClient(store, clock)
    await store.close()
    const keyBefore = readFileSync(`${file}.key`, 'utf8')

    const rotation = cliJson<{key_id: string; retired_key_ids: string[]; resealed: number; key_source: string; ended_sessions: number}>(['rotate-secret-key', '--db', file])
    expect(rotation.resealed).toBe(2)
    expect(rotation.ended_sessions).toBe(0)
    expect(rotation.retired_key_ids).toHaveLength(1)
    expect(rotation.key_source).toBe(`${file}.key`)
    const keyAfter = readFileSync(`${file}.key`, 'utf8')
    expect(keyAfter).not.toBe(keyBefore)
    expect(keyAfter.trim().split('\n')).toHaveLength(1)
    expect(statSync(`${file}.key`).mode & 0o777).toBe(0o600)

    const reopened = await openStore({file})
    stores.push(reopened)
    const stored = (await sql<{partner_password: string}>`select partner_password from clients`.execute(reopened.db)).rows[0]!
    expect(stored.partner_password.startsWith(`sealed:v1:${rotation.key_id}:`)).toBe(true)
    const [sent] = await deliverOne(reopened, clock, clientId, 'P-3')
    expect(sent!.headers.authorization).toBe(basic)
  })
})
