import {expect} from 'vitest'

/**
 * The browser's part of the code flow against a running server: open the authorize URL, sign in
 * on the consent page, press Allow. Done with fetch and a cookie header, as a user agent would.
 * Returns the redirect back to the client.
 */
export async function consentInBrowser(baseUrl: string, authorizeUrl: URL, credentials: {email: string; password: string}): Promise<URL> {
  const cookies = new Map<string, string>()
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair!.indexOf('=')
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1))
    }
    return res
  }
  const cookie = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  const fields = (html: string) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]))
  const page = remember(await fetch(authorizeUrl))
  const signInFields = fields(await page.text())
  const signedIn = remember(
    await fetch(`${baseUrl}/oauth/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: {cookie: cookie(), origin: baseUrl},
      body: new URLSearchParams({...signInFields, ...credentials}),
    }),
  )
  expect(signedIn.status).toBe(303)
  const consentPage = remember(await fetch(new URL(signedIn.headers.get('location')!, baseUrl), {headers: {cookie: cookie()}, redirect: 'manual'}))
  // A client the member allowed these scopes before gets its code at once (remembered consent).
  if (consentPage.status === 302) return new URL(consentPage.headers.get('location')!)
  const consentFields = fields(await consentPage.text())
  const decided = await fetch(`${baseUrl}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: {cookie: cookie(), origin: baseUrl},
    body: new URLSearchParams({...consentFields, decision: 'allow'}),
  })
  expect(decided.status).toBe(302)
  return new URL(decided.headers.get('location')!)
}
