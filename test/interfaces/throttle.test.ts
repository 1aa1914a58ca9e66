import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {signIn} from '../../src/interfaces/signon/service.js'
import {ManualClock} from '../../src/lib/clock.js'
import {THROTTLE} from '../../src/registry/throttle.js'
import {openStore, type Store} from '../../src/store/db.js'
import {form} from '../helpers/app.js'
import {tempDir} from '../helpers/cli.js'
import {CookieJar, csrfOf, PASSWORD, setupClientAndMember} from './signon/flow.js'
import type {RegisteredClient} from '../../src/registry/service.js'
import {openCliStore} from '../helpers/store.js'

describe('guessing is slowed and recorded in the store', () => {
  let store: Store
  let clock: ManualClock
  let app: ReturnType<typeof createApp>
  let client: RegisteredClient
  const file = () => join(tempDir(), 'throttle.db')
  let path: string

  beforeEach(async () => {
    path = file()
    store = await openCliStore(path)
    clock = new ManualClock()
    app = createApp({db: store.db, clock, log: () => undefined})
    client = (await setupClientAndMember({store, db: store.db, clock, app, logs: []}, {grants: ['signon', 'balance']})).client
  })
  afterEach(async () => store.close())

  async function signInForm(password: string, target = app): Promise<Response> {
    const params = {client_id: client.client_id, redirect_uri: 'https://client.example/callback', response_type: 'code', state: 's'}
    const jar = new CookieJar()
    const page = jar.take(await target.request(`/oauth/authorize?${new URLSearchParams(params)}`))
    return target.request(
      '/oauth/session',
      form({...params, csrf_token: csrfOf(await page.text()), email: 'ana@clinic.example', password}, {...jar.header(), origin: 'http://localhost'}),
    )
  }

  it('locks a member after five wrong passwords (even the right one waits), then lets the real member in', async () => {
    for (let i = 0; i < THROTTLE.FREE_FAILURES; i++) expect((await signInForm('wrong password')).status).toBe(401)
    const locked = await signInForm(PASSWORD)
    expect(locked.status).toBe(429)
    expect(locked.headers.get('retry-after')).toBe('1')
    expect(await locked.text()).toContain('Too many failed attempts. Try again in 1 second.')
    clock.advance(1)
    expect((await signInForm(PASSWORD)).status).toBe(303)
    // Success cleared the count: the next mistake is a plain 401 again.
    expect((await signInForm('wrong password')).status).toBe(401)
  })

  it('doubles the lock per further failure, never beyond five minutes', async () => {
    let lastWait = 0
    for (let i = 0; i < 30; i++) {
      const res = await signInForm('wrong password')
      if (res.status === 429) {
        lastWait = Number(res.headers.get('retry-after'))
        clock.advance(lastWait)
      }
    }
    expect(lastWait).toBe(THROTTLE.MAX_LOCK_SECONDS)
    expect(THROTTLE.MAX_LOCK_SECONDS).toBeLessThanOrEqual(300)
  })

  it("throttles client secrets at the token endpoint and interface C alike, in each one's error shape", async () => {
    const basic = (secret: string) => `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`
    for (let i = 0; i < THROTTLE.FREE_FAILURES; i++) {
      expect((await app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basic('wrong-secret')}))).status).toBe(401)
    }
    const token = await app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basic(client.client_secret)}))
    expect(token.status).toBe(429)
    expect(token.headers.get('retry-after')).toBe('1')
    expect(Object.keys((await token.json()) as object).sort()).toEqual(['error', 'error_description'])
    const balance = await app.request('/balance/countries', {headers: {authorization: basic(client.client_secret)}})
    expect(balance.status).toBe(429)
    expect(balance.headers.get('retry-after')).toBe('1')
    expect(Object.keys((await balance.json()) as object)).toEqual(['message'])
  })

  it('holds across restarts and across every process on the store', async () => {
    for (let i = 0; i < THROTTLE.FREE_FAILURES; i++) await signInForm('wrong password')
    const other = await openCliStore(path)
    try {
      const otherApp = createApp({db: other.db, clock, log: () => undefined})
      expect((await signInForm(PASSWORD, otherApp)).status).toBe(429)
    } finally {
      await other.close()
    }
  })

  it('slows one address guessing across many accounts', async () => {
    const attempt = {now: clock.now(), address: '203.0.113.9'}
    for (let i = 0; i < THROTTLE.ADDRESS_FREE_FAILURES; i++) {
      await expect(signIn(store.db, `nobody${i}@clinic.example`, 'guess', attempt)).rejects.toMatchObject({code: 'access_denied'})
    }
    await expect(signIn(store.db, 'ana@clinic.example', PASSWORD, attempt)).rejects.toMatchObject({code: 'too_many_requests'})
    // The same member from another address is not held back by it.
    await expect(signIn(store.db, 'ana@clinic.example', PASSWORD, {now: clock.now(), address: '198.51.100.4'})).resolves.toMatchObject({email: 'ana@clinic.example'})
  })
})

describe('API keys of interface E', () => {
  it("slows an address that keeps presenting wrong keys, answering 429 in E's own shape", async () => {
    const store = await openStore({file: ':memory:'})
    try {
      const clock = new ManualClock()
      const {authenticateKey} = await import('../../src/interfaces/conversations/keys.js')
      const call = (apiKey: string) => authenticateKey(store.db, apiKey, 'summary', {now: clock.now(), address: '192.0.2.7'})
      for (let i = 0; i < THROTTLE.ADDRESS_FREE_FAILURES; i++) await expect(call(`mpk_guess_${i}`)).rejects.toMatchObject({code: 'unauthorized'})
      await expect(call('mpk_guess_next')).rejects.toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '1'}})
      clock.advance(1)
      await expect(call('mpk_guess_after')).rejects.toMatchObject({code: 'unauthorized'})
    } finally {
      await store.close()
    }
  })
})
