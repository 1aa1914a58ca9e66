import type {TestContext} from '../../helpers/app.js'
import {form} from '../../helpers/app.js'
import {addMember, type RegisteredClient, type MemberView} from '../../../src/registry/service.js'
import type {NewClientInput} from '../../../src/registry/schema.js'
import {registerTestClient} from '../../helpers/clients.js'

export const REDIRECT = 'https://client.example/callback'
export const ORIGIN = 'http://localhost'
export const PASSWORD = 'correct horse battery'

/** Cookies set by the app, sent back on later requests (what a browser would do). */
export class CookieJar {
  private cookies = new Map<string, string>()
  take(res: Response): Response {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq)
      const value = pair!.slice(eq + 1)
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return res
  }
  /** A cookie's value as the browser keeps it. */
  get(name: string): string | undefined {
    return this.cookies.get(name)
  }
  header(): Record<string, string> {
    return this.cookies.size ? {cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')} : {}
  }
}

export async function setupClientAndMember(
  ctx: TestContext,
  client: Partial<NewClientInput> = {},
  email = 'ana@clinic.example',
): Promise<{client: RegisteredClient; member: MemberView}> {
  const now = ctx.clock.now()
  const registered = await registerTestClient(ctx.store, {name: 'Acme Research', url: 'https://client.example', redirect_uris: [REDIRECT], token_ttl: 3600, ...client}, now)
  const member = await addMember(ctx.db, {email, password: PASSWORD, first_name: 'Ana', last_name: 'Ruiz', country: 'US', specialty: 'Oncology', npi: '1234567893'}, now)
  return {client: registered, member}
}

export function authorizeParams(clientId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', state: 'st-123', ...extra}
}

export function authorizeUrl(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(params)}`
}

export function csrfOf(html: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(html)
  if (!match) throw new Error('no csrf_token in page')
  return match[1]!
}

/** Opens the authorize page and signs in; returns the jar (now signed in) and the csrf token. */
export async function signIn(
  ctx: TestContext,
  params: Record<string, string>,
  email = 'ana@clinic.example',
  password = PASSWORD,
): Promise<{jar: CookieJar; csrf: string; res: Response}> {
  const jar = new CookieJar()
  const page = jar.take(await ctx.app.request(authorizeUrl(params)))
  const csrf = csrfOf(await page.text())
  const res = jar.take(await ctx.app.request('/oauth/session', form({...params, csrf_token: csrf, email, password}, {...jar.header(), origin: ORIGIN})))
  // A sign-in rotates the form token: the next page carries the new one, which is the cookie's
  // signed value (value.signature).
  const rotated = jar.get('mp_csrf')
  const next = rotated === undefined ? csrf : decodeURIComponent(rotated).slice(0, decodeURIComponent(rotated).lastIndexOf('.'))
  return {jar, csrf: res.status === 303 ? next : csrf, res}
}

/** The whole browser part: sign in and press a button. Returns the redirect Location. */
export async function decide(ctx: TestContext, params: Record<string, string>, decision: 'allow' | 'deny' = 'allow', email?: string): Promise<URL> {
  const {jar, csrf} = await signIn(ctx, params, email)
  const res = jar.take(await ctx.app.request('/oauth/authorize', form({...params, csrf_token: csrf, decision}, {...jar.header(), origin: ORIGIN})))
  if (res.status !== 302) throw new Error(`expected a redirect, got ${res.status}: ${await res.text()}`)
  return new URL(res.headers.get('location')!)
}

export async function getCode(ctx: TestContext, clientId: string, extra: Record<string, string> = {}, email?: string): Promise<string> {
  const location = await decide(ctx, authorizeParams(clientId, extra), 'allow', email)
  return location.searchParams.get('code')!
}

export function exchange(ctx: TestContext, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(ctx.app.request('/oauth/token', form(fields, headers)))
}

export async function tokenFor(ctx: TestContext, client: RegisteredClient, extra: Record<string, string> = {}): Promise<string> {
  const code = await getCode(ctx, client.client_id)
  const res = await exchange(ctx, {grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id, client_secret: client.client_secret, ...extra})
  const body = (await res.json()) as {access_token: string}
  if (res.status !== 200) throw new Error(`token exchange failed: ${JSON.stringify(body)}`)
  return body.access_token
}

export function bearer(token: string): RequestInit {
  return {headers: {authorization: `Bearer ${token}`}}
}
