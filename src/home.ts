import {html} from 'hono/html'
import {DEMO_API_KEY, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_MEMBER} from './demo-data.js'

/**
 * `GET /`: what this service is, where its reference is, and, on a demo site, a sign-in link that
 * starts the authorization flow for the demo client and calls to copy. Plain HTML (no scripts),
 * under the same page headers as the consent pages.
 */
export function homePage(base: string, demo: boolean, now: Date = new Date()) {
  const authorize = new URL('/oauth/authorize', base)
  authorize.search = new URLSearchParams({client_id: DEMO_CLIENT_ID, redirect_uri: `${base}/demo/callback`, response_type: 'code', state: 'from-the-home-page'}).toString()
  const basic = `${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`
  // The last 365 days up to now, like the calls the demo prints: its posts cover the last two
  // years whenever it was seeded, and a fixed year would one day fall outside them.
  const end = new Date(Math.floor(now.getTime() / 1000) * 1000)
  const start = new Date(end.getTime() - 365 * 86_400_000)
  const stamp = (d: Date) => d.toISOString().replace('.000Z', 'Z')
  const calls = [
    `curl -s -u ${basic} ${base}/balance/user_id/1/summary`,
    `curl -s -X POST ${base}/oauth/token -d grant_type=client_credentials -d scope=pulses -u ${basic}`,
    `curl -s "${base}/conversations/summary?terms%5B%5D=sepsis&start=${stamp(start)}&end=${stamp(end)}" -H "Accept: application/vnd.service-v1+json" -H "X-Service-Conversation-API-Key: ${DEMO_API_KEY}"`,
  ]
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>medpanel</title>
<style>body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d2733}code,pre{background:#f4f6f8;border-radius:4px}pre{padding:.6rem;overflow-x:auto}a{color:#0b5cad}</style></head>
<body>
<h1>medpanel</h1>
<p>A physician-community service: OAuth 2 sign-on, balances and withdrawals, pulse exports and conversation search over HTTP, and pushes of research projects to partners.</p>
<ul>
<li><a href="/docs">API reference</a> (every operation, its fields and errors) and the machine-readable <a href="/openapi.json">/openapi.json</a></li>
<li><a href="/readyz">/readyz</a> (and its older name <a href="/healthz">/healthz</a>): 200 once the store is migrated${demo ? ' and the demo data is in place' : ''}, 503 while starting or stopping; <a href="/livez">/livez</a>: 200 while the process runs</li>
</ul>
${
  demo
    ? html`<h2>Demo</h2>
<p><a href="${authorize.toString()}">Sign in as the demo doctor</a> (${DEMO_MEMBER.email} / ${DEMO_MEMBER.password}): this starts the authorization flow of the demo client; after you allow it, the callback page shows the command that exchanges the code for a token.</p>
<p>Calls to try (the demo's credentials are published and work only on this demo data set):</p>
<pre>${calls.join('\n')}</pre>`
    : html`<p>This site runs without the demo data; see the API reference for the calls and their credentials.</p>`
}
</body></html>`
}
