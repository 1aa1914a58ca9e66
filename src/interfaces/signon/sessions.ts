import type {Kysely} from 'kysely'
import {config} from '../../config.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import {findMember} from '../../registry/repository.js'
import type {MemberRow} from '../../registry/tables.js'
import {writeTransaction} from '../../store/db.js'
import type {Database, Db} from '../../store/database.js'
import * as repo from './repository.js'

/** A sign-in on the consent page lasts a working day. */
export const SESSION_SECONDS = config.signon.sessionSeconds

/**
 * Starts a sign-in session for the member and answers its id, for the cookie: 256 random bits,
 * new at every sign-in, stored only as its SHA-256. The session this browser presented, if any,
 * ends first (whoever it was for), so a sign-in never keeps or reuses an id the browser had before.
 * Spent sessions are swept at each sign-in, so the table holds about one row per sign-in of the
 * last SESSION_SECONDS.
 */
export async function openSession(db: Kysely<Database>, memberId: number, replacing: string | undefined, now: Date): Promise<string> {
  const id = randomToken(32)
  const stamp = iso(now)
  await writeTransaction(db, async (trx) => {
    if (replacing !== undefined) await repo.endSession(trx, sha256(replacing), stamp)
    await repo.insertSession(trx, {id_hash: sha256(id), member_id: memberId, created_at: stamp, expires_at: iso(new Date(now.getTime() + SESSION_SECONDS * 1000))})
  })
  // Its own statement, outside the transaction: two sign-ins sweeping the same rows never conflict.
  await repo.deleteSpentSessions(db, stamp)
  return id
}

/**
 * Signs every member out, in every process at once (sessions live in the store): after the store
 * key leaked, a forged cookie must find no live session to name. Answers how many ended.
 */
export async function endEverySession(db: Db, now: Date): Promise<number> {
  return repo.endEverySession(db, iso(now))
}

/** Sign-out: the session ends on the server, so a copy of its cookie kept anywhere opens nothing. */
export async function closeSession(db: Db, sessionId: string | undefined, now: Date): Promise<void> {
  if (sessionId !== undefined) await repo.endSession(db, sha256(sessionId), iso(now))
}

/** A live sign-in: the member, and when the session began (OpenID Connect's auth_time). */
export interface SignedIn {
  member: MemberRow
  signedInAt: string
}

/**
 * The member behind a sign-in cookie's session id, unless the session is unknown, ended (sign-out
 * or a later sign-in in the same browser) or past its SESSION_SECONDS, or the member's sessions
 * were ended after it began (a password change or a deactivation, even one undone since), or the
 * member left.
 */
export async function sessionMember(db: Db, sessionId: string, now: Date): Promise<SignedIn | undefined> {
  const session = await repo.findSession(db, sha256(sessionId))
  if (!session || session.ended_at !== null || session.expires_at <= iso(now)) return undefined
  const began = Date.parse(session.created_at)
  const member = await findMember(db, session.member_id)
  if (member?.active !== 1 || Date.parse(member.password_changed_at) > began) return undefined
  if (member.sessions_ended_at !== null && Date.parse(member.sessions_ended_at) >= began) return undefined
  return {member, signedInAt: session.created_at}
}
