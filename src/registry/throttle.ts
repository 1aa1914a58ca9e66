import {AppError} from '../errors.js'
import {iso} from '../lib/clock.js'
import {sha256} from '../lib/hashing.js'
import type {Db} from '../store/database.js'
import {readerOf, writeTransaction} from '../store/db.js'
import {prepared} from '../store/prepared.js'
import {versionCache} from '../store/version-cache.js'
import {config} from '../config.js'

/**
 * Guessing slowed, the way OWASP and the big identity providers do it: each account (a member's
 * e-mail, a client id, an API key) may fail FREE_FAILURES times in a row for free; after that it
 * is locked for 1 s, then 2, 4, 8 … seconds per further failure, never more than MAX_LOCK_SECONDS,
 * so the real owner is never shut out for more than a few minutes. Each client address gets a
 * larger allowance (ADDRESS_FREE_FAILURES) and a longer cap, so one address guessing across many
 * accounts is slowed too. A success clears the account's count; an address's count is forgotten
 * FORGET_AFTER_SECONDS after its last failure. While locked, the secret is not even checked: a
 * locked account answers the same whether the guess was right or wrong.
 * Recorded in the store, so a lock holds across restarts and across every serve process.
 */
export const THROTTLE = {
  FREE_FAILURES: config.throttle.freeFailures,
  MAX_LOCK_SECONDS: config.throttle.maxLockSeconds,
  ADDRESS_FREE_FAILURES: config.throttle.addressFreeFailures,
  ADDRESS_MAX_LOCK_SECONDS: config.throttle.addressMaxLockSeconds,
  FORGET_AFTER_SECONDS: config.throttle.forgetAfterSeconds,
} as const

export interface Subjects {
  /** The account the secret belongs to, e.g. `member:ana@clinic.example`, `client:abc`. */
  account: string
  /** Where the attempt came from (the client's socket address), if known. */
  address?: string | undefined
}

/** A subject for an API key: its hash, so the key itself is never stored here. */
export function keySubject(key: string): string {
  return `key:${sha256(key).slice(0, 32)}`
}

function subjectsOf(subjects: Subjects): string[] {
  return subjects.address ? [subjects.account, `address:${subjects.address}`] : [subjects.account]
}

function lockSeconds(subject: string, failures: number): number {
  const address = subject.startsWith('address:')
  const free = address ? THROTTLE.ADDRESS_FREE_FAILURES : THROTTLE.FREE_FAILURES
  const cap = address ? THROTTLE.ADDRESS_MAX_LOCK_SECONDS : THROTTLE.MAX_LOCK_SECONDS
  if (failures < free) return 0
  return Math.min(2 ** Math.min(failures - free, 20), cap)
}

/** Thrown while locked; each interface renders it in its own shape (429 with Retry-After). */
export function tooManyAttempts(retryAfterSeconds: number): AppError {
  const wait = retryAfterSeconds >= 90 ? `${Math.ceil(retryAfterSeconds / 60)} minutes` : retryAfterSeconds === 1 ? '1 second' : `${retryAfterSeconds} seconds`
  return new AppError('too_many_requests', `Too many failed attempts. Try again in ${wait}.`, {headers: {'Retry-After': String(retryAfterSeconds)}})
}

// Read on every authenticated call: prepared once (store/prepared.ts), for one subject and for two.
const failuresOf1 = prepared(1, (db: Db, subject: string) => db.selectFrom('auth_failures').select(['subject', 'locked_until']).where('subject', '=', subject))
const failuresOf2 = prepared(2, (db: Db, account: string, address: string) =>
  db.selectFrom('auth_failures').select(['subject', 'locked_until']).where('subject', 'in', [account, address]),
)

/**
 * "No failures on record" for a subject pair, kept while the store is unchanged (every failure is
 * a write, which changes the store version). Subjects with failures are read every time.
 */
const recentFailures = versionCache<string, {subject: string; locked_until: string | null}[]>(10_000, (rows) => rows.length === 0)

/**
 * Refuses (429) while the account or the address is locked. Otherwise answers whether the account
 * has failures on record (which a success then clears).
 */
export async function assertNotLocked(db: Db, subjects: Subjects, now: Date): Promise<{accountHasFailures: boolean}> {
  const reader = readerOf(db)
  const key = subjects.address ? `${subjects.account}\n${subjects.address}` : subjects.account
  const rows = await recentFailures(reader, key, () =>
    subjects.address ? failuresOf2(reader, subjects.account, `address:${subjects.address}`) : failuresOf1(reader, subjects.account),
  )
  const stamp = iso(now)
  let wait = 0
  for (const row of rows) {
    if (row.locked_until !== null && row.locked_until > stamp) wait = Math.max(wait, Math.ceil((Date.parse(row.locked_until) - now.getTime()) / 1000))
  }
  if (wait > 0) throw tooManyAttempts(wait)
  return {accountHasFailures: rows.some((row) => row.subject === subjects.account)}
}

/** Counts a failure against the account and the address, locking them once past their allowance. */
export async function recordFailure(db: Db, subjects: Subjects, now: Date): Promise<void> {
  const stamp = iso(now)
  const forgetBefore = iso(new Date(now.getTime() - THROTTLE.FORGET_AFTER_SECONDS * 1000))
  await writeTransaction(db, async (trx) => {
    // Guesses at random client ids or e-mails leave rows behind; now and then the forgotten ones go.
    if (Math.random() < 0.01) {
      await trx
        .deleteFrom('auth_failures')
        .where('last_failure_at', '<', forgetBefore)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', stamp)]))
        .execute()
    }
    for (const subject of subjectsOf(subjects)) {
      const row = await trx.selectFrom('auth_failures').selectAll().where('subject', '=', subject).executeTakeFirst()
      const failures = row && row.last_failure_at >= forgetBefore ? row.failures + 1 : 1
      const seconds = lockSeconds(subject, failures)
      const lockedUntil = seconds > 0 ? iso(new Date(now.getTime() + seconds * 1000)) : null
      await trx
        .insertInto('auth_failures')
        .values({subject, failures, locked_until: lockedUntil, last_failure_at: stamp})
        .onConflict((oc) => oc.column('subject').doUpdateSet({failures, locked_until: lockedUntil, last_failure_at: stamp}))
        .execute()
    }
  })
}

/** A success clears the account's failures (not the address's: one good account must not launder a guesser). */
export async function recordSuccess(db: Db, subjects: Subjects): Promise<void> {
  await db.deleteFrom('auth_failures').where('subject', '=', subjects.account).execute()
}

/**
 * Runs a secret check under the throttle: refused while locked (the check does not run), a
 * failure counted, a success clearing the account. `check` answers whether the secret was right.
 */
export async function throttled<T>(db: Db, subjects: Subjects, now: Date, check: () => Promise<T | undefined>): Promise<T | undefined> {
  // One read says both whether a lock holds and whether a success has failures to clear: a
  // failure recorded between that read and the check is left for the next success to clear.
  const {accountHasFailures} = await assertNotLocked(db, subjects, now)
  const result = await check()
  if (result === undefined) await recordFailure(db, subjects, now)
  else if (accountHasFailures) await recordSuccess(db, subjects)
  return result
}
