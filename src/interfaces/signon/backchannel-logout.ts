import type {Kysely} from 'kysely'
import {signonConfig} from './config.js'
import {iso} from '../../lib/clock.js'
import {newUuid} from '../../lib/ids.js'
import {writeTransaction} from '../../store/transactions.js'
import type {SignonView as Database, SignonDb as Db} from './tables.js'
import * as deliveries from './logout-repository.js'
import {type EndedSession, endSessions, insertIdTokenSession, type LogoutAudienceRow, takeLogoutAudience, voidedSessions} from './repository.js'

/**
 * OpenID Connect Back-Channel Logout 1.0: every client that got an ID token in a sign-in session
 * is told when the session ends, by a logout token posted to its back-channel logout URI. Ending a
 * session queues those posts in the same transaction (the outbox, `logout_deliveries`); the logout
 * worker (logout-worker.ts) sends them, and retries a client that is slow or down, so a member's
 * sign-out never waits on a client.
 */

/** Remembers that the client got an ID token in the session `sid`, so its end is told to it. */
export async function noteIdToken(db: Db, sid: string, clientId: string, memberId: number, now: Date): Promise<void> {
  await insertIdTokenSession(db, {sid, client_id: clientId, member_id: memberId, created_at: iso(now)})
}

/** The sid of a logout token that names the member alone (logout_deliveries.sid holds no NULL). */
export const NO_SID = ''

/** One logout token to queue: to whom, naming which member and which session (NO_SID: every one). */
interface Logout {
  client_id: string
  member_id: number
  sid: string
}

/**
 * The logout tokens one session end owes: one per client and sid to a client that registered
 * backchannel_logout_session_required, since it keeps its sessions by sid; one per client and
 * member to the others, however many of the member's sessions ended together (several sign-ins
 * within seconds, several browsers, "sign out everywhere"). That one names the sid when a single
 * session ended, and the member alone when several did: the spec's sub-only token, which a client
 * that does not require sid reads as every session of that member.
 */
export function logoutsOf(audience: readonly LogoutAudienceRow[]): Logout[] {
  const owed = new Map<string, Logout>()
  for (const row of audience) {
    const key = row.session_required === 1 ? `sid ${row.client_id} ${row.sid}` : `sub ${row.client_id} ${row.member_id}`
    const earlier = owed.get(key)
    if (earlier === undefined) owed.set(key, {client_id: row.client_id, member_id: row.member_id, sid: row.sid})
    else if (earlier.sid !== row.sid) earlier.sid = NO_SID
  }
  return [...owed.values()]
}

/**
 * Queues the logout tokens the sessions that just ended owe (logoutsOf) to the clients that got an
 * ID token in them and have a back-channel logout URI. Call inside the transaction that ended
 * them, with every session that end covers, so each client is told once.
 */
export async function enqueueLogouts(db: Db, ended: EndedSession[], now: Date): Promise<void> {
  const audience = await takeLogoutAudience(
    db,
    ended.flatMap((session) => (session.sid === null ? [] : [session.sid])),
  )
  if (audience.length === 0) return
  const stamp = iso(now)
  // Now and then, deliveries long finished go (see signonConfig.backchannelLogout.keepSeconds).
  if (Math.random() < 0.05) await deliveries.deleteFinished(db, iso(new Date(now.getTime() - signonConfig.backchannelLogout.keepSeconds * 1000)))
  await deliveries.insertDeliveries(
    db,
    logoutsOf(audience).map((row) => ({
      id: newUuid(),
      client_id: row.client_id,
      member_id: row.member_id,
      sid: row.sid,
      status: 'pending' as const,
      next_attempt_at: stamp,
      first_attempt_at: null,
      last_status: null,
      last_error: null,
      lease_owner: null,
      lease_until: null,
      created_at: stamp,
      updated_at: stamp,
      delivered_at: null,
    })),
  )
}

/**
 * Ends the sessions a member's change voided (a deactivation, a password change, "sign out
 * everywhere": registry sets the member's timestamps, and sessionMember already refuses them), and
 * queues their logout tokens. The registry sits below sign-on and cannot call it, so the logout
 * worker does, each round: a change made by any process, `update-member` included, is told within
 * a poll. Answers how many ended.
 */
export async function endVoidedSessions(db: Kysely<Database>, now: Date): Promise<number> {
  const stamp = iso(now)
  // A read first: an idle worker never takes the store's write lock.
  const voided = await voidedSessions(db, stamp)
  if (voided.length === 0) return 0
  return writeTransaction(db, async (trx) => {
    const ended = await endSessions(trx, voided, stamp)
    await enqueueLogouts(trx, ended, now)
    return ended.length
  })
}
