import {AppError, isClientError} from '../../errors.js'
import {narrow} from '../../store/database.js'
import type {Clock} from '../../lib/clock.js'
import {decoyHash, hashPassword, needsRehash, verifyPassword} from '../../lib/hashing.js'
import {findMemberByEmail, updateMemberRow} from '../../registry/repository.js'
import {guardPasswordCheck} from '../../registry/throttle.js'
import type {MemberRow} from '../../registry/tables.js'
import type {SignonDb as Db} from './tables.js'
import type {DeviceCookie} from './session-cookie.js'
import {signonMetrics} from './metrics.js'
import type {Metrics} from '../../metrics/metrics.js'

export interface SignInAttempt {
  clock: Clock
  /** Where the request came from (the guessing limits' address). */
  address?: string | undefined
  /** The browser's device cookie, if it presented one. */
  device?: DeviceCookie | undefined
  /** The address is on the allow list (serve --guessing-allow). */
  exempt?: boolean
  /** The serving app's registry: the sign-in's outcome, and a refusal by the limits, are counted there; undefined with metrics off. */
  metrics?: Metrics | undefined
}

/**
 * The device cookie's id when it is this member's (the one the e-mail names) and was given after
 * the member's sessions last ended (a password change, a deactivation, "sign out everywhere"):
 * then this browser's failures count against it alone.
 */
function liveDevice(member: MemberRow | undefined, device: DeviceCookie): string | undefined {
  if (member?.id !== device.memberId || device.issuedAt <= Date.parse(member.password_changed_at)) return undefined
  if (member.sessions_ended_at !== null && device.issuedAt <= Date.parse(member.sessions_ended_at)) return undefined
  return device.id
}

/**
 * Checks a member's e-mail and password under the guessing limits (registry/throttle.ts). Every
 * refusal that is not a lock reads the same, an unknown e-mail, a wrong password and a right
 * password of an inactive member alike, so the form never tells a guesser which part was right.
 */
export async function signIn(db: Db, email: string, password: string, attempt: SignInAttempt): Promise<MemberRow> {
  const signins = attempt.metrics?.of(signonMetrics).signins
  let checked: {member: MemberRow; rehashed: string | undefined} | undefined
  // Whether the e-mail names a member decides only whether it may wait for a hash slot: an unknown
  // one under pressure is answered as a wrong password without a hash, after as long.
  const named = await findMemberByEmail(narrow(db), email)
  const how = {device: attempt.device && liveDevice(named, attempt.device), exempt: attempt.exempt === true, metrics: attempt.metrics, known: named !== undefined}
  try {
    checked = await guardPasswordCheck(
      narrow(db),
      email,
      attempt.address,
      attempt.clock,
      async () => {
        const found = await findMemberByEmail(narrow(db), email)
        // Verify against a decoy when the member is unknown, so timing does not reveal e-mails.
        const ok = await verifyPassword(password, found?.password_hash ?? decoyHash())
        if (!found || !ok || found.active !== 1) return undefined
        // A hash made with older parameters is replaced while the password is at hand, in the
        // same hash slot. Not a password change: tokens and sign-in sessions stay as they are.
        return {member: found, rehashed: needsRehash(found.password_hash) ? await hashPassword(password) : undefined}
      },
      how,
    )
  } catch (error) {
    // Refused by the guessing limits; a store that failed is no sign-in's outcome.
    if (isClientError(error)) signins?.failure.inc()
    throw error
  }
  if (!checked) {
    signins?.failure.inc()
    throw new AppError('access_denied', 'e-mail or password is not correct', {status: 401})
  }
  signins?.success.inc()
  if (checked.rehashed !== undefined) await updateMemberRow(narrow(db), checked.member.id, {password_hash: checked.rehashed})
  return checked.member
}
