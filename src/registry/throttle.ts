import {AppError} from '../errors.js'
import {normalEmail} from '../lib/email.js'
import {limitKey} from '../lib/ip-address.js'
import {type Clock, iso} from '../lib/clock.js'
import type {RegistryDb as Db} from './tables.js'
import {writeTransaction} from '../store/transactions.js'
import type {Metrics} from '../metrics/metrics.js'
import {config} from '../config.js'
import {availableParallelism} from 'node:os'
import {type HashCaller, HashQueue, HashQueueFull} from './hash-queue.js'
import {registryMetrics} from './metrics.js'

/**
 * Guessing limits that hold under parallel attack and cannot be turned against the innocent.
 *
 * Two kinds of secret are guarded, differently:
 *
 * - Member passwords (low entropy, slow to check). Each attempt is counted *before* its hash runs
 *   (a reservation, given back when the password was right), against two subjects: the member
 *   from this address, and the member from anywhere. The pair is locked after a few failures; the
 *   member-wide count allows many more, so failures from a handful of addresses never lock the
 *   member out from another, yet a guesser spread over many addresses is still slowed. A lock is
 *   timed from when the failure is recorded (after the hash), not from when the request began.
 *   Checks in flight are bounded per e-mail in this process, and the hashes themselves by one
 *   queue for the whole process (registry/hash-queue.ts), shared fairly among addresses and
 *   members, in which only e-mails that name a member wait; what is beyond either is refused
 *   (429) before it costs a hash.
 * - High-entropy credentials (client secrets, API keys: 256 random bits). Guessing one is
 *   hopeless, so a right one is always accepted, whoever failed before. A wrong one is counted
 *   against the caller's address and that kind of credential only; past the allowance the caller's
 *   further wrong guesses are answered 429 with Retry-After instead of 401.
 *
 * Counts live in the store (auth_failures), so they hold across restarts and every serve process.
 */
export const THROTTLE = config.throttle

interface Rule {
  /** Failures allowed before each further one locks for a doubling time. */
  free: number
  /** The longest one lock lasts. */
  maxLockSeconds: number
}

const PAIR: Rule = {free: THROTTLE.memberAddressFreeFailures, maxLockSeconds: THROTTLE.memberAddressMaxLockSeconds}
const MEMBER: Rule = {free: THROTTLE.memberFreeFailures, maxLockSeconds: THROTTLE.memberMaxLockSeconds}
const GUESSER: Rule = {free: THROTTLE.guesserFreeFailures, maxLockSeconds: THROTTLE.guesserMaxLockSeconds}
const SPRAYER: Rule = {free: THROTTLE.addressFreeFailures, maxLockSeconds: THROTTLE.addressMaxLockSeconds}

/** The kinds of high-entropy credential; each is counted apart, so one never locks another. */
export type CredentialKind = 'client-secret' | 'api-key'

/**
 * Where an attempt came from, as the limits key it: an IPv6 caller by its /64 (a host given a /64
 * picks any of its addresses); in-process requests (tests) have no address and share one.
 */
function addressPart(address: string | undefined): string {
  return address === undefined ? '-' : limitKey(address)
}

function memberSubject(email: string): string {
  return `password:${normalEmail(email)}`
}

function lockSeconds(rule: Rule, failures: number): number {
  if (failures < rule.free) return 0
  return Math.min(2 ** Math.min(failures - rule.free, 20), rule.maxLockSeconds)
}

function secondsUntil(lockedUntil: string | null, now: Date): number {
  if (lockedUntil === null) return 0
  return Math.max(0, Math.ceil((Date.parse(lockedUntil) - now.getTime()) / 1000))
}

/** Refused for too many attempts; each interface renders it in its own shape (429 with Retry-After). */
export function tooManyAttempts(retryAfterSeconds: number, message = 'Too many failed attempts.'): AppError {
  const wait = retryAfterSeconds >= 90 ? `${Math.ceil(retryAfterSeconds / 60)} minutes` : retryAfterSeconds === 1 ? '1 second' : `${retryAfterSeconds} seconds`
  return new AppError('too_many_requests', `${message} Try again in ${wait}.`, {headers: {'Retry-After': String(retryAfterSeconds)}})
}

type Trx = Db

async function readRow(trx: Trx, subject: string) {
  return trx.selectFrom('auth_failures').selectAll().where('subject', '=', subject).executeTakeFirst()
}

async function writeRow(trx: Trx, subject: string, failures: number, lockedUntil: string | null, stamp: string): Promise<void> {
  await trx
    .insertInto('auth_failures')
    .values({subject, failures, locked_until: lockedUntil, last_failure_at: stamp})
    .onConflict((oc) => oc.column('subject').doUpdateSet({failures, locked_until: lockedUntil, last_failure_at: stamp}))
    .execute()
}

/** A failure older than the forget window (seconds) no longer counts. */
function liveFailures(row: {failures: number; last_failure_at: string} | undefined, now: Date, window: number = THROTTLE.forgetAfterSeconds): number {
  if (!row) return 0
  return row.last_failure_at >= iso(new Date(now.getTime() - window * 1000)) ? row.failures : 0
}

/** Guesses at made-up e-mails and addresses leave rows behind; now and then the forgotten ones go. */
async function sweepNowAndThen(trx: Trx, now: Date): Promise<void> {
  if (Math.random() >= 0.01) return
  const stamp = iso(now)
  await trx
    .deleteFrom('auth_failures')
    .where('last_failure_at', '<', iso(new Date(now.getTime() - THROTTLE.forgetAfterSeconds * 1000)))
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', stamp)]))
    .execute()
}

/** A guess as the limits see it: when, from where, and the registry a refusal is counted in (undefined with metrics off). */
export interface GuessAttempt {
  now: Date
  address?: string | undefined
  metrics?: Metrics | undefined
}

/**
 * Counts one wrong high-entropy credential against the caller's address, and answers how long that
 * address is held back: 0 when no lock was in force as the guess came (the caller answers 401 as
 * usual), else the seconds for a 429's Retry-After, the lock now lengthened by this guess too.
 * Never called for a right credential, which is always accepted.
 */
export async function countWrongGuess(db: Db, kind: CredentialKind, {address, now, metrics}: GuessAttempt): Promise<number> {
  const subject = `${kind}@${addressPart(address)}`
  const wait = await writeTransaction(db, async (trx) => {
    await sweepNowAndThen(trx, now)
    const row = await readRow(trx, subject)
    const failures = liveFailures(row, now) + 1
    const seconds = lockSeconds(GUESSER, failures)
    const lockedUntil = seconds > 0 ? iso(new Date(now.getTime() + seconds * 1000)) : null
    await writeRow(trx, subject, failures, lockedUntil, iso(now))
    return secondsUntil(row?.locked_until ?? null, now) > 0 ? secondsUntil(lockedUntil, now) : 0
  })
  // Every caller answers a wait with 429: counted here, once, by the kind of secret only.
  if (wait > 0) metrics?.of(registryMetrics).guessing[kind === 'api-key' ? 'api_key' : 'client_secret'].inc()
  return wait
}

/**
 * Node's thread pool, where scrypt runs beside file and DNS work (the delivery worker's lookups):
 * UV_THREADPOOL_SIZE threads, 4 unless set.
 */
export function threadPoolSize(): number {
  const size = Number(process.env.UV_THREADPOOL_SIZE)
  return Number.isInteger(size) && size >= 1 ? Math.min(size, 1024) : 4
}

/**
 * The most hashes that may run at once: one thread of the pool is always left for files and DNS,
 * and a hash beyond the pool's threads would wait in its first-come queue, where no fairness holds.
 */
export function mostHashSlots(): number {
  return Math.max(1, threadPoolSize() - 1)
}

/** Hashes running at once unless serve --password-hashes says: one per core, within the pool. */
export function defaultHashSlots(): number {
  return Math.min(availableParallelism(), mostHashSlots())
}

function hashQueue(slots: number): HashQueue {
  return new HashQueue({slots, queueLength: slots * THROTTLE.passwordHashesWaitingPerSlot, halfLifeSeconds: THROTTLE.passwordHashUseHalfLifeSeconds})
}

/** The process's password hashes: every sign-in's check runs in one of its slots. */
let hashes = hashQueue(defaultHashSlots())

/** serve --password-hashes: how many hashes run at once in this process (1 to mostHashSlots()). */
export function setPasswordHashSlots(slots: number): void {
  hashes = hashQueue(slots)
}

/** Hashes running and waiting in this process now, and unknown e-mails answered without one, for the metrics. */
export function passwordHashCounts(): {running: number; waiting: number; standIns: number} {
  return hashes.counts()
}

/** Password checks running now in this process, per member (by the e-mail given, known or not). */
const inFlight = new Map<string, number>()

function enter(key: string, limit: number): boolean {
  const running = inFlight.get(key) ?? 0
  if (running >= limit) return false
  inFlight.set(key, running + 1)
  return true
}

function leave(key: string): void {
  const running = (inFlight.get(key) ?? 1) - 1
  if (running <= 0) inFlight.delete(key)
  else inFlight.set(key, running)
}

/** How an attempt is counted beyond the member and its address. */
export interface PasswordAttempt {
  /**
   * The browser holds a device cookie of this member (signed in from it before, since its
   * sessions last ended): its id. Its failures then count against the cookie alone.
   */
  device?: string | undefined
  /** The address is on the operator's allow list (serve --guessing-allow): no spraying limit. */
  exempt?: boolean
  /** The serving app's registry, where a refusal is counted; undefined with metrics off. */
  metrics?: Metrics | undefined
  /**
   * The e-mail names a member. An unknown one (false) never waits in the hash queue: under
   * pressure it is answered as a wrong password without a hash (registry/hash-queue.ts), and
   * `check` is not called. Undefined counts as known.
   */
  known?: boolean | undefined
}

/** One count an attempt is reserved against. */
interface Counted {
  subject: string
  rule: Rule
  /** Failures older than this (seconds) no longer count. */
  window: number
  /** A right password clears the count (the member is here); otherwise only its reservation goes. */
  clearedBySuccess: boolean
}

/**
 * What one attempt counts against: a browser with the member's device cookie, that cookie only;
 * any other, the member from this address, the member from anywhere, and (unless exempt) this
 * address across every member.
 */
function countedAgainst(member: string, address: string | undefined, attempt: PasswordAttempt): Counted[] {
  const forget = THROTTLE.forgetAfterSeconds
  if (attempt.device !== undefined) return [{subject: `${member}@device:${attempt.device}`, rule: PAIR, window: forget, clearedBySuccess: true}]
  const counted: Counted[] = [
    {subject: `${member}@${addressPart(address)}`, rule: PAIR, window: forget, clearedBySuccess: true},
    {subject: member, rule: MEMBER, window: forget, clearedBySuccess: false},
  ]
  if (address !== undefined && attempt.exempt !== true) {
    counted.push({subject: `sprayer@${addressPart(address)}`, rule: SPRAYER, window: THROTTLE.addressWindowSeconds, clearedBySuccess: false})
  }
  return counted
}

/**
 * Runs one password check for `email` from `address` under the limits above. `check` hashes and
 * answers whether the password was right (and the member may sign in); a wrong one is thrown by
 * the caller afterwards. Refused with 429, before `check` runs, while any count the attempt goes
 * to is locked, too many checks for the e-mail are already running, or the process's hash queue
 * is full of callers with a better claim. An unknown e-mail (`attempt.known` false) under
 * pressure is answered undefined, as a wrong password, with `check` never run.
 */
export async function guardPasswordCheck<T>(
  db: Db,
  email: string,
  address: string | undefined,
  clock: Clock,
  check: () => Promise<T | undefined>,
  attempt: PasswordAttempt = {},
): Promise<T | undefined> {
  const member = memberSubject(email)
  const counted = countedAgainst(member, address, attempt)
  // One e-mail, known or not, may have only so many checks at once in this process.
  if (!enter(member, THROTTLE.passwordChecksInFlightPerMember)) throw refused(attempt.metrics, tooManyAttempts(1, 'Too many sign-ins at once.'))
  try {
    const caller: HashCaller = {address: addressPart(address), member, trusted: attempt.device !== undefined, known: attempt.known}
    let result: T | undefined
    try {
      // The attempt is counted once its hash is about to run (or its stand-in's answer is being
      // timed): one refused here was not made.
      result = await hashes.run(caller, async (turn) => {
        await reserve(db, counted, clock.now(), attempt.metrics)
        return turn === 'slot' ? check() : undefined
      })
    } catch (error) {
      if (error instanceof HashQueueFull) throw refused(attempt.metrics, tooManyAttempts(1, 'Too many sign-ins at once.'))
      throw error
    }
    if (result === undefined) await confirmFailure(db, counted, clock.now())
    else await giveBack(db, counted)
    return result
  } finally {
    leave(member)
  }
}

/** A password check refused by the limits, counted for the metrics (by kind of secret only). */
function refused(metrics: Metrics | undefined, error: AppError): AppError {
  metrics?.of(registryMetrics).guessing.password.inc()
  return error
}

/** Counts the attempt before it is checked; refuses while any of its counts is locked. */
async function reserve(db: Db, counted: Counted[], now: Date, metrics: Metrics | undefined): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await sweepNowAndThen(trx, now)
    const rows = []
    for (const count of counted) rows.push({...count, row: await readRow(trx, count.subject)})
    const wait = Math.max(...rows.map(({row}) => secondsUntil(row?.locked_until ?? null, now)))
    if (wait > 0) throw refused(metrics, tooManyAttempts(wait))
    for (const {subject, rule, window, row} of rows) {
      const failures = liveFailures(row, now, window) + 1
      const seconds = lockSeconds(rule, failures)
      // A reservation past the allowance locks at once: a parallel guess waits for this one.
      await writeRow(trx, subject, failures, seconds > 0 ? iso(new Date(now.getTime() + seconds * 1000)) : null, iso(now))
    }
  })
}

/** The check failed: the lock its count earns runs from now, when the failure is known. */
async function confirmFailure(db: Db, counted: Counted[], now: Date): Promise<void> {
  await writeTransaction(db, async (trx) => {
    for (const {subject, rule} of counted) {
      const row = await readRow(trx, subject)
      if (!row) continue
      const seconds = lockSeconds(rule, row.failures)
      if (seconds === 0) continue
      const until = iso(new Date(now.getTime() + seconds * 1000))
      if (row.locked_until === null || until > row.locked_until) await writeRow(trx, subject, row.failures, until, row.last_failure_at)
    }
  })
}

/**
 * The password was right: the count of this browser or member-and-address is cleared (the member
 * is here), and the member-wide and address-wide counts lose only this attempt's reservation, so
 * a success never launders the failures of guessers elsewhere.
 */
async function giveBack(db: Db, counted: Counted[]): Promise<void> {
  await writeTransaction(db, async (trx) => {
    for (const {subject, rule, clearedBySuccess} of counted) {
      if (clearedBySuccess) {
        await trx.deleteFrom('auth_failures').where('subject', '=', subject).execute()
        continue
      }
      const row = await readRow(trx, subject)
      if (!row) continue
      const failures = row.failures - 1
      if (failures <= 0) {
        await trx.deleteFrom('auth_failures').where('subject', '=', subject).execute()
        continue
      }
      const lockedUntil = lockSeconds(rule, failures) > 0 ? row.locked_until : null
      await trx.updateTable('auth_failures').set({failures, locked_until: lockedUntil}).where('subject', '=', subject).execute()
    }
  })
}
