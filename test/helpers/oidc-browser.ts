import {expect} from 'vitest'

/** What a member types on the sign-in form. */
export interface Credentials {
  email: string
  password: string
}

interface StoredCookie {
  value: string
  path: string
}

/** The hidden fields of the first form on a page whose action is `action`, HTML entities decoded. */
export function formFields(html: string, action: string): Record<string, string> {
  const form = html.match(new RegExp(`<form[^>]*action="${action.replace(/[/.]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`))
  if (!form) throw new Error(`no form posting to ${action} on the page:\n${html.slice(0, 2000)}`)
  const decode = (value: string) => value.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'"})[name]!)
  return Object.fromEntries([...form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, decode(m[2]!)]))
}

/**
 * A user agent for the sign-on pages that keeps its cookies between flows, as a browser does: the
 * sign-in session it gets on the consent page is still there when a relying party later sends it
 * to the logout endpoint. Plain fetch with a cookie jar (name, value, path; Max-Age=0 and a past
 * Expires delete), redirects never followed: every test looks at each hop itself.
 */
export class CookieBrowser {
  private readonly jar = new Map<string, StoredCookie>()

  constructor(readonly baseUrl: string) {}

  /** The value of a cookie the browser holds, if any. */
  cookie(name: string): string | undefined {
    return this.jar.get(name)?.value
  }

  /** Sets a cookie by hand (a copy kept from earlier, replayed). */
  setCookie(name: string, value: string, path = '/'): void {
    this.jar.set(name, {value, path})
  }

  /** A request from this browser: its cookies for the path go along; a POST to the service carries the service's Origin, as a form on its page would. */
  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url, this.baseUrl)
    const headers = new Headers(init.headers)
    const cookies = [...this.jar].filter(([, c]) => target.pathname === c.path || target.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
    if (cookies.length > 0) headers.set('cookie', cookies.map(([name, c]) => `${name}=${c.value}`).join('; '))
    if (init.method === 'POST' && target.origin === new URL(this.baseUrl).origin && !headers.has('origin')) headers.set('origin', target.origin)
    const response = await fetch(target, {...init, headers, redirect: 'manual'})
    this.remember(response)
    return response
  }

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim())
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq)
      let path = '/'
      let gone = false
      for (const attribute of attributes) {
        const [key, value = ''] = attribute.split('=')
        const lower = key!.toLowerCase()
        if (lower === 'path') path = value
        if (lower === 'max-age' && Number(value) <= 0) gone = true
        if (lower === 'expires' && Date.parse(value) <= Date.now()) gone = true
      }
      if (gone) this.jar.delete(name)
      else this.jar.set(name, {value: pair!.slice(eq + 1), path})
    }
  }

  /** GET a page; the answer's body read as text. */
  async open(url: string | URL): Promise<{status: number; html: string; location: string | null}> {
    const response = await this.request(url)
    return {status: response.status, html: await response.text(), location: response.headers.get('location')}
  }

  /** POST a form of the service's pages. */
  post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.request(path, {method: 'POST', body: new URLSearchParams(fields)})
  }

  /**
   * The browser's part of the code flow: open the authorize URL, sign in if the sign-in form shows
   * (with `credentials`), press Allow on the consent page. Answers the redirect back to the client:
   * at once, when the member allowed this client these scopes before (remembered consent).
   */
  async authorize(authorizeUrl: URL, credentials: Credentials): Promise<URL> {
    let page = await this.open(authorizeUrl)
    if (page.status === 302) return new URL(page.location!)
    expect(page.status, page.html).toBe(200)
    if (isSignInPage(page.html)) {
      const signedIn = await this.post('/oauth/session', {...formFields(page.html, '/oauth/session'), ...credentials})
      expect(signedIn.status, await signedIn.clone().text()).toBe(303)
      page = await this.open(signedIn.headers.get('location')!)
      if (page.status === 302) return new URL(page.location!)
      expect(page.status, page.html).toBe(200)
    }
    expect(isConsentPage(page.html), page.html).toBe(true)
    const decided = await this.post('/oauth/authorize', {...formFields(page.html, '/oauth/authorize'), decision: 'allow'})
    expect(decided.status).toBe(302)
    return new URL(decided.headers.get('location')!)
  }
}

/** The sign-in form of the consent flow. */
export function isSignInPage(html: string): boolean {
  return html.includes('action="/oauth/session"') && html.includes('type="password"')
}

/** The consent page's Allow and Deny. */
export function isConsentPage(html: string): boolean {
  return html.includes('action="/oauth/authorize"') && html.includes('value="allow"')
}
