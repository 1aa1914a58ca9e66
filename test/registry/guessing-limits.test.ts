import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'
import {ManualClock} from '../../src/lib/clock.js'
import type {Metrics} from '../../src/metrics/metrics.js'
import {registryMetrics} from '../../src/registry/metrics.js'
import {countWrongGuess, defaultHashSlots, guardPasswordCheck, type PasswordAttempt, setPasswordHashSlots, tooManyAttempts} from '../../src/registry/throttle.js'
import type {Store} from '../../src/store/db.js'
import {openTestStore} from '../helpers/store.js'

/*
 * The guessing limits by their numbers, as docs/architecture.md's table states them: 5 wrong
 * passwords per member and address, 50 per member, locks doubling up to 15 and 5 minutes, no
 * bound on checks in flight per address and 4 per e-mail, 20 wrong secrets per address and kind with locks
 * doubling up to 15 minutes, everything forgotten after an hour. The figures are written here, not
 * read from the code, so a changed limit fails.
 */

const EMAIL = 'ana@clinic.example'
const WRONG = async () => undefined
const RIGHT = async () => 'right'

let store: Store
let clock: ManualClock

beforeEach(async () => {
  store = await openTestStore()
  clock = new ManualClock()
})
afterEach(async () => {
  vi.restoreAllMocks()
  await store.close()
})

/** One password check: 'ok', 'wrong', or the Retry-After of a refusal. */
async function attempt(address: string | undefined, check: () => Promise<string | undefined> = WRONG, email = EMAIL, how: PasswordAttempt = {}): Promise<'ok' | 'wrong' | number> {
  try {
    return (await guardPasswordCheck(store.db, email, address, clock, check, how)) === undefined ? 'wrong' : 'ok'
  } catch (error) {
    const e = error as {code?: string; headers?: Record<string, string>}
    if (e.code !== 'too_many_requests') throw error
    return Number(e.headers?.['Retry-After'])
  }
}

describe('wrong passwords', () => {
  it('locks one member at one address after 5, for 1, 2, 4 … seconds, never beyond 900', async () => {
    for (let i = 0; i < 5; i++) expect(await attempt('203.0.113.1')).toBe('wrong')
    const waits: number[] = []
    for (let i = 0; i < 12; i++) {
      const wait = await attempt('203.0.113.1', RIGHT)
      expect(typeof wait).toBe('number')
      waits.push(wait as number)
      clock.advance(wait as number)
      expect(await attempt('203.0.113.1')).toBe('wrong')
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900])
  })

  it('leaves the same member alone at another address while one address is locked', async () => {
    for (let i = 0; i < 5; i++) await attempt('203.0.113.1')
    expect(await attempt('203.0.113.1', RIGHT)).toBe(1)
    expect(await attempt('203.0.113.2', RIGHT)).toBe('ok')
    // And another member at the locked address.
    expect(await attempt('203.0.113.1', RIGHT, 'ben@clinic.example')).toBe('ok')
  })

  it('locks a member from everywhere after 50, for 1, 2, 4 … seconds, never beyond 300', async () => {
    // Four per address: no pair ever reaches its own limit.
    for (let i = 0; i < 50; i++) expect(await attempt(`198.51.100.${Math.floor(i / 4)}`)).toBe('wrong')
    const waits: number[] = []
    for (let i = 0; i < 11; i++) {
      const wait = await attempt(`192.0.2.${i}`, RIGHT)
      expect(typeof wait).toBe('number')
      waits.push(wait as number)
      clock.advance(wait as number)
      expect(await attempt(`192.0.2.${100 + i}`)).toBe('wrong')
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
  })

  it('forgets failures an hour after the last one, not before', async () => {
    for (let i = 0; i < 4; i++) await attempt('203.0.113.1')
    clock.advance(3600)
    // Exactly an hour later the four still count: the fifth locks.
    expect(await attempt('203.0.113.1')).toBe('wrong')
    expect(await attempt('203.0.113.1', RIGHT)).toBe(1)

    for (let i = 0; i < 4; i++) await attempt('203.0.113.9', WRONG, 'ben@clinic.example')
    clock.advance(3601)
    // A second past the hour they are forgotten: five more wrong ones are allowed.
    for (let i = 0; i < 4; i++) expect(await attempt('203.0.113.9', WRONG, 'ben@clinic.example')).toBe('wrong')
    expect(await attempt('203.0.113.9', RIGHT, 'ben@clinic.example')).toBe('ok')
  })

  it('a right password clears the count at its address but takes back only its own attempt member-wide', async () => {
    for (let i = 0; i < 4; i++) await attempt('203.0.113.1')
    expect(await attempt('203.0.113.1', RIGHT)).toBe('ok')
    // The pair starts again from nothing: four more wrong ones leave it unlocked.
    for (let i = 0; i < 4; i++) expect(await attempt('203.0.113.1')).toBe('wrong')
    expect(await attempt('203.0.113.1', RIGHT)).toBe('ok')

    // Member-wide: 8 failures so far; 41 more from elsewhere make 49.
    for (let i = 0; i < 41; i++) expect(await attempt(`198.51.100.${Math.floor(i / 4)}`)).toBe('wrong')
    // The 50th attempt is right: counted while it ran (which locks at once), then given back.
    expect(await attempt('192.0.2.1', RIGHT)).toBe('ok')
    expect(await attempt('192.0.2.2', RIGHT)).toBe('ok')
    // The 50th failure locks the member everywhere: the earlier failures were not laundered.
    expect(await attempt('192.0.2.3')).toBe('wrong')
    expect(await attempt('192.0.2.4', RIGHT)).toBe(1)
  })

  it('times a lock from when a slow check fails, not from when it began', async () => {
    for (let i = 0; i < 4; i++) await attempt('203.0.113.1')
    const slow = async () => {
      clock.advance(3) // a hash that took three seconds on a busy machine
      return undefined
    }
    expect(await attempt('203.0.113.1', slow)).toBe('wrong')
    expect(await attempt('203.0.113.1', RIGHT)).toBe(1)
  })

  it('locks at once when a check past the allowance begins, so a parallel guess waits for it', async () => {
    for (let i = 0; i < 5; i++) await attempt('203.0.113.1')
    clock.advance(1)
    // The sixth check is still running: it already holds the pair's two-second lock.
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    let started: () => void = () => undefined
    const running = new Promise<void>((resolve) => (started = resolve))
    const sixth = attempt('203.0.113.1', async () => {
      started()
      await gate
      return undefined
    })
    await running
    expect(await attempt('203.0.113.1', RIGHT)).toBe(2)
    release()
    expect(await sixth).toBe('wrong')
  })

  it('a right password does not lift a member-wide lock earned by failures elsewhere', async () => {
    for (let i = 0; i < 50; i++) await attempt(`198.51.100.${Math.floor(i / 4)}`)
    clock.advance(1)
    // Counted while it ran (51: a two-second lock), then given back (50: still locked).
    expect(await attempt('192.0.2.1', RIGHT)).toBe('ok')
    expect(await attempt('192.0.2.2', RIGHT)).toBe(2)
  })

  it('a right password with no failures before it leaves no count behind', async () => {
    expect(await attempt('203.0.113.1', RIGHT)).toBe('ok')
    expect(await store.db.selectFrom('auth_failures').selectAll().execute()).toEqual([])
    // After one failure the member-wide count keeps that failure only.
    expect(await attempt('203.0.113.1')).toBe('wrong')
    expect(await attempt('203.0.113.1', RIGHT)).toBe('ok')
    const left = await store.db.selectFrom('auth_failures').select(['subject', 'failures', 'locked_until']).orderBy('subject').execute()
    // And so does the address's count across members (password spraying).
    expect(left).toEqual([
      {subject: 'password:ana@clinic.example', failures: 1, locked_until: null},
      {subject: 'sprayer@203.0.113.1', failures: 1, locked_until: null},
    ])
  })
})

describe('one address across members (password spraying)', () => {
  const member = (i: number) => `member${i}@clinic.example`

  it('after 30 wrong passwords for 30 members in 15 minutes, that address waits, its right passwords too, doubling to 5 minutes', async () => {
    for (let i = 0; i < 30; i++) expect(await attempt('198.51.100.9', WRONG, member(i))).toBe('wrong')
    expect(await attempt('198.51.100.9', RIGHT, member(99))).toBe(1)
    clock.advance(1)
    expect(await attempt('198.51.100.9', WRONG, member(98))).toBe('wrong')
    expect(await attempt('198.51.100.9', RIGHT, member(99))).toBe(2)
    // Another address, and the same members from it, are not held back.
    expect(await attempt('198.51.100.10', RIGHT, member(99))).toBe('ok')
  })

  it('forgets failures older than 15 minutes', async () => {
    for (let i = 0; i < 29; i++) expect(await attempt('198.51.100.9', WRONG, member(i))).toBe('wrong')
    clock.advance(901)
    expect(await attempt('198.51.100.9', WRONG, member(30))).toBe('wrong')
    expect(await attempt('198.51.100.9', RIGHT, member(99))).toBe('ok')
  })

  it('counts an IPv6 caller by its /64', async () => {
    for (let i = 0; i < 30; i++) expect(await attempt(`2001:db8:7:7::${(i + 1).toString(16)}`, WRONG, member(i))).toBe('wrong')
    expect(await attempt('2001:db8:7:7:ffff::1', RIGHT, member(99))).toBe(1)
    expect(await attempt('2001:db8:7:8::1', RIGHT, member(99))).toBe('ok')
  })

  it('never holds back an address on the allow list', async () => {
    for (let i = 0; i < 40; i++) expect(await attempt('10.20.0.1', WRONG, member(i), {exempt: true})).toBe('wrong')
    expect(await attempt('10.20.0.1', RIGHT, member(99), {exempt: true})).toBe('ok')
  })
})

describe("a browser holding the member's device cookie", () => {
  it('is never locked out by failures from elsewhere: they reach the member-wide lock, not the device', async () => {
    // Twelve addresses, five wrong passwords each: the member-wide count passes its 50.
    for (let a = 1; a <= 12; a++) for (let i = 0; i < 5; i++) await attempt(`203.0.113.${a}`)
    expect(await attempt('192.0.2.77', RIGHT)).toEqual(expect.any(Number))
    expect(await attempt('192.0.2.77', RIGHT, EMAIL, {device: 'dev-1'})).toBe('ok')
  })

  it("counts the device's own failures against the device only, five before it waits", async () => {
    for (let i = 0; i < 5; i++) expect(await attempt('192.0.2.77', WRONG, EMAIL, {device: 'dev-1'})).toBe('wrong')
    expect(await attempt('192.0.2.77', RIGHT, EMAIL, {device: 'dev-1'})).toBe(1)
    // The member from another browser, at the same address, is not held back by it.
    expect(await attempt('192.0.2.77', RIGHT)).toBe('ok')
    const subjects = (await store.db.selectFrom('auth_failures').select('subject').execute()).map((row) => row.subject)
    expect(subjects).toEqual(['password:ana@clinic.example@device:dev-1'])
  })
})

describe('password checks in flight', () => {
  // These tests hold checks running to see the bounds per address and per member; the process's
  // hash slots (registry/hash-queue.ts, tested on its own) would hold the others in line.
  beforeAll(() => setPasswordHashSlots(16))
  afterAll(() => setPasswordHashSlots(defaultHashSlots()))

  /** Starts a check that waits for `gate`; resolves `started` once it runs. */
  function held(address: string | undefined, email: string, gate: Promise<void>) {
    let started: () => void = () => undefined
    const running = new Promise<void>((resolve) => (started = resolve))
    const done = guardPasswordCheck(store.db, email, address, clock, async () => {
      started()
      await gate
      return undefined
    })
    return {running, done}
  }

  it('refuses a fifth check for one member while four run, from any address, and takes it once they end', async () => {
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const checks = [1, 2, 3, 4].map((i) => held(`198.51.100.${i}`, EMAIL, gate))
    await Promise.all(checks.map((c) => c.running))
    const refused = await guardPasswordCheck(store.db, EMAIL, '198.51.100.9', clock, RIGHT).catch((error) => error)
    expect(refused).toMatchObject({code: 'too_many_requests', headers: {'Retry-After': '1'}})
    expect(refused.message).toBe('Too many sign-ins at once. Try again in 1 second.')
    // Another member is not held back by it.
    expect(await attempt('198.51.100.9', RIGHT, 'ben@clinic.example')).toBe('ok')
    release()
    await Promise.all(checks.map((c) => c.done))
    expect(await attempt('198.51.100.9', RIGHT)).toBe('ok')
  })

  it('puts no bound on one address: a third and a fourth check from it run (a shared exit is many people)', async () => {
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const checks = [1, 2, 3].map((i) => held('203.0.113.7', `n${i}@clinic.example`, gate))
    await Promise.all(checks.map((c) => c.running))
    expect(await attempt('203.0.113.7', RIGHT, 'o@clinic.example')).toBe('ok')
    release()
    await Promise.all(checks.map((c) => c.done))
  })

  it('frees an e-mail once its checks end, also when a check throws', async () => {
    for (let i = 0; i < 5; i++) {
      await expect(
        guardPasswordCheck(store.db, 'm@clinic.example', `203.0.113.${i}`, clock, async () => {
          throw new Error('hash failed')
        }),
      ).rejects.toThrow('hash failed')
    }
    expect(await attempt('203.0.113.9', RIGHT, 'm@clinic.example')).toBe('ok')
  })

  it('answers an unknown e-mail as a wrong password without calling its check once no slot is free, and counts it as one', async () => {
    setPasswordHashSlots(1)
    try {
      let release: () => void = () => undefined
      const gate = new Promise<void>((resolve) => (release = resolve))
      const running = held('198.51.100.1', 'busy@clinic.example', gate)
      await running.running
      let checked = false
      const check = async () => {
        checked = true
        return 'right'
      }
      const answer = attempt('198.51.100.2', check, 'nobody@clinic.example', {known: false})
      expect(await answer).toBe('wrong')
      expect(checked).toBe(false)
      const row = await store.db.selectFrom('auth_failures').selectAll().where('subject', '=', 'password:nobody@clinic.example@198.51.100.2').executeTakeFirst()
      expect(row?.failures).toBe(1)
      release()
      await running.done
    } finally {
      setPasswordHashSlots(16)
    }
  })
})

describe('wrong client secrets and API keys', () => {
  const guess = (kind: 'client-secret' | 'api-key', address: string | null = '192.0.2.7') => countWrongGuess(store.db, kind, {address: address ?? undefined, now: clock.now()})

  it('answers the first 20 as usual, then waits 2, 4, 8 … seconds, never beyond 900', async () => {
    for (let i = 0; i < 20; i++) expect(await guess('client-secret')).toBe(0)
    const waits: number[] = []
    for (let i = 0; i < 12; i++) waits.push(await guess('client-secret'))
    expect(waits).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900])
  })

  it('counts each kind and each address apart', async () => {
    for (let i = 0; i < 21; i++) await guess('client-secret')
    expect(await guess('client-secret')).toBeGreaterThan(0)
    expect(await guess('api-key')).toBe(0)
    expect(await guess('client-secret', '192.0.2.8')).toBe(0)
    // In-process callers (no address) share one count of their own.
    expect(await guess('client-secret', null)).toBe(0)
  })

  it('answers as usual again once the lock has run out', async () => {
    for (let i = 0; i < 20; i++) await guess('api-key')
    clock.advance(1)
    // The 20th guess locked for one second; it is over, so the 21st is answered as usual.
    expect(await guess('api-key')).toBe(0)
    expect(await guess('api-key')).toBe(4)
  })

  it('forgets wrong guesses an hour after the last one', async () => {
    for (let i = 0; i < 19; i++) await guess('api-key')
    clock.advance(3601)
    for (let i = 0; i < 20; i++) expect(await guess('api-key')).toBe(0)
    expect(await guess('api-key')).toBe(2)
  })
})

describe('refusals counted for the metrics', () => {
  it('counts each 429 once, by the kind of secret only', async () => {
    const counted: string[] = []
    const counter = (kind: string) => ({inc: () => counted.push(kind)})
    const guessing = {password: counter('password'), client_secret: counter('client_secret'), api_key: counter('api_key')}
    const metrics = {of: (set: unknown) => (set === registryMetrics ? {guessing} : undefined)}
    const registry = metrics as unknown as Metrics
    const counting = {address: '192.0.2.7', metrics: registry}
    for (let i = 0; i < 20; i++) await countWrongGuess(store.db, 'api-key', {...counting, now: clock.now()})
    for (let i = 0; i < 20; i++) await countWrongGuess(store.db, 'client-secret', {...counting, now: clock.now()})
    expect(counted).toEqual([])
    await countWrongGuess(store.db, 'api-key', {...counting, now: clock.now()})
    await countWrongGuess(store.db, 'client-secret', {...counting, now: clock.now()})
    // Without the registry nothing is counted; with it, a refused password is.
    await countWrongGuess(store.db, 'api-key', {address: '192.0.2.7', now: clock.now()})
    for (let i = 0; i < 5; i++) await attempt('203.0.113.1', WRONG, EMAIL, {metrics: registry})
    await attempt('203.0.113.1', RIGHT, EMAIL, {metrics: registry})
    expect(counted).toEqual(['api_key', 'client_secret', 'password'])
  })
})

describe('forgotten rows', () => {
  const subjects = async () => (await store.db.selectFrom('auth_failures').select('subject').orderBy('subject').execute()).map((row) => row.subject)

  it('are swept now and then (one write in a hundred), never while they still count', async () => {
    for (const address of ['192.0.2.1', '192.0.2.2']) await countWrongGuess(store.db, 'api-key', {address: address, now: clock.now()})
    clock.advance(1800)
    await countWrongGuess(store.db, 'api-key', {address: '192.0.2.3', now: clock.now()})
    clock.advance(1801)
    const random = vi.spyOn(Math, 'random')
    // Drawn at 0.01 or above: no sweep.
    random.mockReturnValue(0.01)
    await countWrongGuess(store.db, 'api-key', {address: '192.0.2.4', now: clock.now()})
    expect(await subjects()).toEqual(['api-key@192.0.2.1', 'api-key@192.0.2.2', 'api-key@192.0.2.3', 'api-key@192.0.2.4'])
    // Below it: rows forgotten over an hour ago go, the one from half an hour ago stays.
    random.mockReturnValue(0.0099)
    await guardPasswordCheck(store.db, EMAIL, '192.0.2.5', clock, RIGHT)
    expect(await subjects()).toEqual(['api-key@192.0.2.3', 'api-key@192.0.2.4'])
  })
})

describe('the 429 message', () => {
  it('says seconds below 90 and whole minutes (rounded up) from 90 on, and sets Retry-After', () => {
    const said = (seconds: number) => ({message: tooManyAttempts(seconds).message, retryAfter: tooManyAttempts(seconds).headers?.['Retry-After']})
    expect(said(1)).toEqual({message: 'Too many failed attempts. Try again in 1 second.', retryAfter: '1'})
    expect(said(2)).toEqual({message: 'Too many failed attempts. Try again in 2 seconds.', retryAfter: '2'})
    expect(said(89)).toEqual({message: 'Too many failed attempts. Try again in 89 seconds.', retryAfter: '89'})
    expect(said(90)).toEqual({message: 'Too many failed attempts. Try again in 2 minutes.', retryAfter: '90'})
    expect(said(121)).toEqual({message: 'Too many failed attempts. Try again in 3 minutes.', retryAfter: '121'})
    expect(tooManyAttempts(5, 'Slow down.')).toMatchObject({code: 'too_many_requests', message: 'Slow down. Try again in 5 seconds.'})
  })
})
