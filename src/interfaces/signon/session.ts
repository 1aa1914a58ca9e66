import type {Context} from 'hono'
import {deleteCookie, getSignedCookie, setSignedCookie} from 'hono/cookie'
import {randomToken} from '../../lib/ids.js'
import {safeEqual} from '../../lib/hashing.js'
import {SESSION_SECONDS} from './service.js'

const SESSION = 'mp_session'
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

export interface Session {
  memberId: number
  issuedAt: number
}

export async function readSession(c: Context, secret: string): Promise<Session | undefined> {
  const raw = await getSignedCookie(c, secret, SESSION)
  const match = typeof raw === 'string' ? /^(\d+)\.(\d+)$/.exec(raw) : null
  if (!match) return undefined
  return {memberId: Number(match[1]), issuedAt: Number(match[2])}
}

export async function startSession(c: Context, secret: string, memberId: number, now: Date, publicHttps = false): Promise<void> {
  await setSignedCookie(c, SESSION, `${memberId}.${now.getTime()}`, secret, cookieOptions(c, SESSION_SECONDS, publicHttps))
}

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
