import type {Kysely} from 'kysely'
import {narrow} from '../../store/database.js'
import {signonConfig} from './config.js'
import {iso} from '../../lib/clock.js'
import {sha256} from '../../lib/hashing.js'
import {randomToken} from '../../lib/ids.js'
import {findMember} from '../../registry/repository.js'
import {endMemberSessions} from '../../registry/service.js'
import type {MemberRow} from '../../registry/tables.js'
import {writeTransaction} from '../../store/transactions.js'
import type {SignonView as Database, SignonDb as Db} from './tables.js'
import {enqueueLogouts} from './backchannel-logout.js'
import * as repo from './repository.js'

/** A sign-in on the consent page lasts a working day. */
export const SESSION_SECONDS = signonConfig.sessionSeconds

/**
 * Starts a sign-in session for the member and answers its id, for the cookie: 256 random bits,
 * new at every sign-in, stored only as its SHA-256. The session this browser presented, if any,
 * ends first (whoever it was for), so a sign-in never keeps or reuses an id the browser had before.
 * Spent sessions are swept at each sign-in, so the table holds about one row per sign-in of the
 * last SESSION_SECONDS. The session's sid (ID and logout tokens) is random too, and public; the
 * same member signing in again on this browser keeps it (see replaceSession).
 */
export async function openSession(db: Kysely<Database>, memberId: number, replacing: string | undefined, now: Date): Promise<string> {
  const id = randomToken(32)
  const stamp = iso(now)
  await writeTransaction(db, async (trx) => {
    const kept = replacing === undefined ? null : await replaceSession(trx, replacing, memberId, now)
    const expires = iso(new Date(now.getTime() + SESSION_SECONDS * 1000))
    await repo.insertSession(trx, {id_hash: sha256(id), member_id: memberId, created_at: stamp, expires_at: expires, sid: kept ?? randomToken(16)})
  })
  // Its own statement, outside the transaction: two sign-ins sweeping the same rows never conflict.
  await repo.deleteSpentSessions(db, stamp)
  await repo.deleteOrphanIdTokenSessions(db)
  return id
}

/**
 * Signs every member out, in every process at once (sessions live in the store): after the store
 * key leaked, a forged cookie must find no live session to name. Every client that got an ID
 * token in one of them is sent a logout token. Answers how many ended.
 */
export async function endEverySession(db: Kysely<Database>, now: Date): Promise<number> {
  return writeTransaction(db, async (trx) => {
    const ended = await repo.endEverySession(trx, iso(now))
    await enqueueLogouts(trx, ended, now)
    return ended.length
  })
}

/**
 * Ends the session a browser presented at a sign-in; answers the sid the new session keeps, if any.
 * The member of a live session signing in again (prompt=login, max_age, the form sent twice within
 * seconds) continues it, as node-oidc-provider does: the cookie's id is new, but the sid stays, so
 * the clients' sessions under it stay good and nobody is told of an end, and its ending later
 * tells each client once. Another member's session, or one a password change or deactivation
 * voided, ends, and its clients hear of it (back-channel logout) as at a sign-out.
 */
async function replaceSession(trx: Kysely<Database>, replacing: string, memberId: number, now: Date): Promise<string | null> {
  const current = await sessionMember(trx, replacing, now)
  const ended = await repo.endSession(trx, sha256(replacing), iso(now))
  // Kept only by the sign-in that ended it: two at once cannot both carry the sid on.
  const sid = current?.member.id === memberId ? current.sid : null
  if (sid !== null && ended.some((session) => session.sid === sid)) return sid
  await enqueueLogouts(trx, ended, now)
  return null
}

/**
 * "Sign out everywhere": the member's timestamp voids every device cookie and any session still
 * being opened, and every live session of the member ends now, in the same transaction, so the
 * clients hear of it as one session end (one logout token each: see backchannel-logout.ts).
 */
export async function signOutEverywhere(db: Kysely<Database>, memberId: number, now: Date): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await endMemberSessions(narrow(trx), memberId, now)
    await enqueueLogouts(trx, await repo.endMemberSessions(trx, memberId, iso(now)), now)
  })
}

/**
 * Sign-out: the session ends on the server, so a copy of its cookie kept anywhere opens nothing,
 * and the clients that got an ID token in it are told (back-channel logout), in one transaction.
 */
export async function closeSession(db: Kysely<Database>, sessionId: string | undefined, now: Date): Promise<void> {
  if (sessionId === undefined) return
  await writeTransaction(db, async (trx) => enqueueLogouts(trx, await repo.endSession(trx, sha256(sessionId), iso(now)), now))
}

/** A live sign-in: the member, and when the session began (OpenID Connect's auth_time). */
export interface SignedIn {
  member: MemberRow
  signedInAt: string
  /** The session's public id, for ID tokens (null for a session begun before sids existed). */
  sid: string | null
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
  const member = await findMember(narrow(db), session.member_id)
  if (member?.active !== 1 || Date.parse(member.password_changed_at) > began) return undefined
  if (member.sessions_ended_at !== null && Date.parse(member.sessions_ended_at) >= began) return undefined
  return {member, signedInAt: session.created_at, sid: session.sid}
}
