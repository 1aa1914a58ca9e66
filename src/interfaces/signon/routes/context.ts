import type {Context} from 'hono'
import type {RouteDeps} from '../../../deps.js'
import {AppError} from '../../../errors.js'
import {serviceOrigin} from '../../../http/allowed-hosts.js'
import {addressListMatcher} from '../../../http/client-address.js'
import {derivedKey} from '../../../store/secrets.js'
import type {MemberRow} from '../../../registry/tables.js'
import {type SignedIn, sessionMember} from '../sessions.js'
import {checkCsrf, csrfToken, readSession} from '../session-cookie.js'

/** Interface A's own settings, which src/app.ts composes into the app's (AppSettings). */
export interface SignonSettings {
  /**
   * Addresses and CIDRs exempt from the limit on one address across members (serve
   * --guessing-allow): a hospital's or an office's shared exit, where many members sign in.
   */
  guessingAllow?: readonly string[]
}

/** What every flow of interface A shares: the store, the clock, the issuer and the sign-in cookie. */
export interface SignonContext {
  deps: RouteDeps<SignonSettings>
  /** The issuer: fixed when the service starts (src/http/allowed-hosts.ts), never the request's Host. */
  issuerOf: (c: Context) => string
  /** The service's public base URL is https: cookies are Secure even behind a proxy that ends TLS. */
  publicHttps: boolean
  /** The key that signs the consent page's cookies. */
  cookieSecret: () => Promise<string>
  /** The member signed in on this browser, and since when, if the cookie names a live session. */
  signedIn: (c: Context) => Promise<SignedIn | undefined>
  /** The member signed in on this browser, if the cookie names a live session. */
  sessionMember: (c: Context) => Promise<MemberRow | undefined>
  /** A fresh or existing CSRF token for a form on this page. */
  formToken: (c: Context) => Promise<string>
  /** Whether an address is exempt from the limit on one address across members (serve --guessing-allow). */
  guessingExempt: (address: string | undefined) => boolean
  /** Refuses a form whose CSRF token does not match this browser's, with `message` on the page. */
  requireFormToken: (c: Context, presented: string | undefined, message?: string) => Promise<void>
}

const EXPIRED_FORM = 'This form has expired. Open the page again and retry.'

export function signonContext(deps: RouteDeps<SignonSettings>): SignonContext {
  const {db, clock} = deps
  let secretPromise: Promise<string> | undefined
  // Derived from the store's key, which lives outside the database: reading the database file is
  // not enough to forge a sign-in cookie. Rotating the key ends every sign-in session.
  const cookieSecret = () => (secretPromise ??= Promise.resolve(derivedKey(deps.keys, 'sign-in cookies').toString('base64url')))
  const publicHttps = deps.baseUrl?.startsWith('https:') ?? false
  const signedIn = async (c: Context) => {
    const sessionId = await readSession(c, await cookieSecret())
    return sessionId ? sessionMember(db, sessionId, clock.now()) : undefined
  }
  return {
    deps,
    issuerOf: (c) => serviceOrigin(deps.baseUrl, c),
    publicHttps,
    cookieSecret,
    signedIn,
    sessionMember: async (c) => (await signedIn(c))?.member,
    formToken: async (c) => csrfToken(c, await cookieSecret(), publicHttps),
    guessingExempt: addressListMatcher(deps.guessingAllow ?? []),
    async requireFormToken(c, presented, message = EXPIRED_FORM) {
      if (!(await checkCsrf(c, await cookieSecret(), presented))) throw new AppError('forbidden', message)
    },
  }
}
