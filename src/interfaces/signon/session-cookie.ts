import type {Context} from 'hono'
import {deleteCookie, getSignedCookie, setSignedCookie} from 'hono/cookie'
import {randomToken} from '../../lib/ids.js'
import {safeEqual} from '../../lib/hashing.js'
import {SESSION_SECONDS} from './sessions.js'

const SESSION = 'mp_session'
const DEVICE = 'mp_device'
const CSRF = 'mp_csrf'

/**
 * `publicHttps`: the service's public base URL is https. Behind a proxy that ends TLS the request
 * itself arrives over http, and the cookies must still be Secure.
 */
function cookieOptions(c: Context, maxAge: number, publicHttps: boolean) {
  return {
    httpOnly: true,
    sameSite: 'Lax' as const,
    secure: publicHttps || new URL(c.req.url).protocol === 'https:',
    path: '/oauth',
    maxAge,
  }
}

/** A session id as openSession makes it: 32 random bytes in base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

/**
 * The session id the browser's cookie carries, if it is signed with our key and has the shape of
 * an id. Whether that session is live is the store's answer (signon.sessionMember). A cookie of
 * the form `memberId.issuedAt`, from releases that kept the session only in the cookie, has
 * another shape and is not read: those members sign in again.
 */
export async function readSession(c: Context, secret: string): Promise<string | undefined> {
  const raw = await getSignedCookie(c, secret, SESSION)
  return typeof raw === 'string' && SESSION_ID.test(raw) ? raw : undefined
}

/**
 * Hands the browser a new session's id (signon.openSession), for SESSION_SECONDS at most, and a
 * new form token: a token someone saw or planted before the sign-in is worth nothing after it.
 */
export async function startSession(c: Context, secret: string, sessionId: string, publicHttps = false): Promise<void> {
  await setSignedCookie(c, SESSION, sessionId, secret, cookieOptions(c, SESSION_SECONDS, publicHttps))
  await setSignedCookie(c, CSRF, randomToken(24), secret, cookieOptions(c, SESSION_SECONDS, publicHttps))
}

/** Drops the cookie; the session itself is ended on the server first (signon.closeSession). */
export function endSession(c: Context): void {
  deleteCookie(c, SESSION, {path: '/oauth'})
}

/**
 * Synchronizer token for the sign-in and consent forms: a random value kept in a signed HttpOnly
 * cookie and echoed in each form; a POST must carry both, equal.
 */
export async function csrfToken(c: Context, secret: string, publicHttps = false): Promise<string> {
  const existing = await getSignedCookie(c, secret, CSRF)
  if (typeof existing === 'string' && existing.length >= 32) return existing
  const token = randomToken(24)
  await setSignedCookie(c, CSRF, token, secret, cookieOptions(c, SESSION_SECONDS, publicHttps))
  return token
}

export async function checkCsrf(c: Context, secret: string, presented: string | undefined): Promise<boolean> {
  const expected = await getSignedCookie(c, secret, CSRF)
  return typeof expected === 'string' && typeof presented === 'string' && safeEqual(expected, presented)
}

/**
 * A browser's device cookie (OWASP's device cookies): given at every successful sign-in, it says
 * the member signed in from this browser before. Signed with the cookie key; whether it still
 * counts (issued after the member's sessions last ended) is sign-in.ts's decision.
 */
export interface DeviceCookie {
  memberId: number
  /** When it was given, in milliseconds since the epoch. */
  issuedAt: number
  /** Its own random id: its failures are counted under it. */
  id: string
}

const DEVICE_VALUE = /^(\d{1,15}):(\d{1,15}):([A-Za-z0-9_-]{22})$/

export async function readDevice(c: Context, secret: string): Promise<DeviceCookie | undefined> {
  const raw = await getSignedCookie(c, secret, DEVICE)
  const match = typeof raw === 'string' ? DEVICE_VALUE.exec(raw) : null
  return match ? {memberId: Number(match[1]), issuedAt: Number(match[2]), id: match[3]!} : undefined
}

/** Gives this browser a new device cookie for the member, for DEVICE_SECONDS. */
export async function giveDevice(c: Context, secret: string, memberId: number, now: Date, seconds: number, publicHttps = false): Promise<void> {
  await setSignedCookie(c, DEVICE, `${memberId}:${now.getTime()}:${randomToken(16)}`, secret, cookieOptions(c, seconds, publicHttps))
}
