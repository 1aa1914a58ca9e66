import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {createApp} from '../../src/app.js'
import {signIn} from '../../src/interfaces/signon/sign-in.js'
import {ManualClock} from '../../src/lib/clock.js'
import {defaultHashSlots, guardPasswordCheck, setPasswordHashSlots} from '../../src/registry/throttle.js'
import type {Store} from '../../src/store/db.js'
import {form} from '../helpers/app.js'
import {tempDir} from '../helpers/cli.js'
import {CookieJar, csrfOf, PASSWORD, setupClientAndMember} from '../interfaces/signon/flow.js'
import type {RegisteredClient} from '../../src/registry/service.js'
import {openCliStore, openMemoryStore} from '../helpers/store.js'
import {basicAuth} from '../helpers/http-basic.js'

describe('guessing is slowed and recorded in the store', () => {
  // These tests hold checks running to see the bounds per address and per member; the process's
  // hash slots (registry/hash-queue.ts, tested on its own) would hold the others in line.
  beforeAll(() => setPasswordHashSlots(16))
  afterAll(() => setPasswordHashSlots(defaultHashSlots()))

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
    app = createApp({store, clock, log: () => undefined})
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
    for (let i = 0; i < 5; i++) expect((await signInForm('wrong password')).status).toBe(401)
    const locked = await signInForm(PASSWORD)
    expect(locked.status).toBe(429)
    expect(locked.headers.get('retry-after')).toBe('1')
    expect(await locked.text()).toContain('Too many failed attempts. Try again in 1 second.')
    clock.advance(1)
    expect((await signInForm(PASSWORD)).status).toBe(303)
    // Success cleared the count: the next mistake is a plain 401 again.
    expect((await signInForm('wrong password')).status).toBe(401)
  })

  it('doubles the lock per further failure, never beyond fifteen minutes for one member at one address', async () => {
    let lastWait = 0
    for (let i = 0; i < 30; i++) {
      const res = await signInForm('wrong password')
      if (res.status === 429) {
        lastWait = Number(res.headers.get('retry-after'))
        clock.advance(lastWait)
      }
    }
    expect(lastWait).toBe(900)
  })

  it('times a lock from when the failure is known, not from when a slow check began', async () => {
    const slowWrong = () =>
      guardPasswordCheck(store.db, 'ana@clinic.example', '203.0.113.5', clock, async () => {
        clock.advance(3) // a hash that took three seconds on a busy machine
        return undefined
      })
    for (let i = 0; i < 5; i++) await expect(slowWrong()).resolves.toBeUndefined()
    await expect(slowWrong()).rejects.toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '1'}})
  })

  it('counts an attempt before its check runs, and a right password gives its count back', async () => {
    const seen: number[] = []
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    // Two checks held open at once, from two addresses: both are already counted member-wide.
    let inside = 0
    let bothInside: () => void = () => undefined
    const entered = new Promise<void>((resolve) => (bothInside = resolve))
    const held = ['198.51.100.1', '198.51.100.2'].map((address) =>
      guardPasswordCheck(store.db, 'ana@clinic.example', address, clock, async () => {
        if (++inside === 2) bothInside()
        await gate
        return address === '198.51.100.1' ? undefined : 'right'
      }),
    )
    await entered
    const counted = async () =>
      (await store.db.selectFrom('auth_failures').select('failures').where('subject', '=', 'password:ana@clinic.example').executeTakeFirst())?.failures ?? 0
    seen.push(await counted())
    release()
    await Promise.all(held)
    seen.push(await counted())
    expect(seen).toEqual([2, 1])
  })

  it("never refuses a client's right secret, but answers one address's further wrong ones 429, in each interface's shape", async () => {
    const basic = (secret: string) => basicAuth(client.client_id, secret)
    for (let i = 0; i < 20; i++) {
      expect((await app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basic('wrong-secret')}))).status).toBe(401)
    }
    const wrongToken = await app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basic('wrong-secret')}))
    expect(wrongToken.status).toBe(429)
    expect(wrongToken.headers.get('retry-after')).toBe('2')
    expect(Object.keys((await wrongToken.json()) as object).sort()).toEqual(['error', 'error_description'])
    const wrongBalance = await app.request('/balance/countries', {headers: {authorization: basic('wrong-secret')}})
    expect(wrongBalance.status).toBe(429)
    expect(Object.keys((await wrongBalance.json()) as object)).toEqual(['message'])
    expect((await app.request('/oauth/token', form({grant_type: 'client_credentials'}, {authorization: basic(client.client_secret)}))).status).toBe(400)
    expect((await app.request('/balance/countries', {headers: {authorization: basic(client.client_secret)}})).status).toBe(200)
  })

  it('holds across restarts and across every process on the store', async () => {
    for (let i = 0; i < 5; i++) await signInForm('wrong password')
    const other = await openCliStore(path)
    try {
      const otherApp = createApp({store: other, clock, log: () => undefined})
      expect((await signInForm(PASSWORD, otherApp)).status).toBe(429)
    } finally {
      await other.close()
    }
  })

  it('locks a member from everywhere only after many addresses have failed', async () => {
    const attempt = (address: string, password: string) => signIn(store.db, 'ana@clinic.example', password, {clock, address})
    // 45 failures from nine addresses counted by the guard alone (no hashing: a second each), then
    // five real sign-ins with a wrong password from a tenth, which hash and count into the same total.
    for (let a = 0; a < 9; a++) {
      for (let i = 0; i < 5; i++) await expect(guardPasswordCheck(store.db, 'ana@clinic.example', `203.0.113.${a}`, clock, wrong)).resolves.toBeUndefined()
    }
    for (let i = 0; i < 5; i++) await expect(attempt('203.0.113.9', 'guess')).rejects.toMatchObject({code: 'access_denied'})
    await expect(attempt('198.51.100.4', PASSWORD)).rejects.toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '1'}})
    clock.advance(1)
    await expect(attempt('198.51.100.4', PASSWORD)).resolves.toMatchObject({email: 'ana@clinic.example'})
  })

  // Checks that answer at once, so the guard counts without hashing.
  const wrong = async (): Promise<string | undefined> => undefined
  const right = async (): Promise<string | undefined> => 'right'

  it('counts 49 failures from anywhere without locking the member, and doubles a member-wide lock up to five minutes', async () => {
    const attempt = (address: string, check: () => Promise<string | undefined>) => guardPasswordCheck(store.db, 'ana@clinic.example', address, clock, check)
    // 49 wrong passwords from seven addresses, 900 s apart, so no pair's lock is still running.
    for (let i = 0; i < 49; i++) {
      await expect(attempt(`203.0.113.${i % 7}`, wrong)).resolves.toBeUndefined()
      clock.advance(900)
    }
    // The 50th from a fresh address is a plain failure; the member is locked only from then on.
    await expect(attempt('198.51.100.50', wrong)).resolves.toBeUndefined()
    await expect(attempt('198.51.100.51', right)).rejects.toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '1'}})
    // Each wait is waited out and followed by one more wrong password from a fresh address.
    const waits: number[] = []
    for (let a = 0; a < 30; a++) {
      const failure = (await attempt(`192.0.2.${a}`, wrong).catch((error) => error)) as {code?: string; headers?: Record<string, string>} | undefined
      if (failure?.code === 'too_many_requests') {
        waits.push(Number(failure.headers!['Retry-After']))
        clock.advance(waits.at(-1)!)
      }
    }
    expect(waits.slice(0, 10)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300])
    expect(Math.max(...waits)).toBe(300)
  })

  it('forgets failures an hour after the last one', async () => {
    const attempt = (check: () => Promise<string | undefined>) => guardPasswordCheck(store.db, 'ana@clinic.example', '203.0.113.20', clock, check)
    for (let i = 0; i < 4; i++) await expect(attempt(wrong)).resolves.toBeUndefined()
    clock.advance(3600)
    // Within the hour of the last failure: this one is the fifth, and locks the pair.
    await expect(attempt(wrong)).resolves.toBeUndefined()
    await expect(attempt(right)).rejects.toMatchObject({code: 'too_many_requests'})
    clock.advance(3601)
    // Past the hour: the count starts again, so four more failures lock nothing.
    for (let i = 0; i < 4; i++) await expect(attempt(wrong)).resolves.toBeUndefined()
    await expect(attempt(right)).resolves.toBe('right')
  })
})

describe('API keys of interface E', () => {
  it("answers an address's further wrong keys 429 in E's own shape, and still takes a right key from it", async () => {
    const store = await openMemoryStore()
    try {
      const clock = new ManualClock()
      const {authenticateKey} = await import('../../src/interfaces/conversations/keys.js')
      const call = (apiKey: string) => authenticateKey(store, apiKey, 'summary', {now: clock.now(), address: '192.0.2.7'})
      for (let i = 0; i < 20; i++) await expect(call(`mpk_guess_${i}`)).rejects.toMatchObject({code: 'unauthorized'})
      // The 20th set a one-second lock; a guess inside it is refused and doubles it.
      await expect(call('mpk_guess_next')).rejects.toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '2'}})
      clock.advance(2)
      await expect(call('mpk_guess_after')).rejects.toMatchObject({code: 'unauthorized'})
      await expect(call('mpk_guess_again')).rejects.toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '8'}})
    } finally {
      await store.close()
    }
  })
})
