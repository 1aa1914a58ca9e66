import type {OpenAPIHono} from '@hono/zod-openapi'
import {DEMO_CLIENT_ID, DEMO_CLIENT_SECRET} from '../../../demo-data.js'
import {DemoCallbackPage} from '../pages.js'
import {findCodeClient} from '../authorize.js'
import type {SignonContext} from './context.js'

/** `serve --demo` only: where the demo client's redirect lands, with the shell line that exchanges the code. */
export function demoRoutes(app: OpenAPIHono, ctx: SignonContext): void {
  app.get('/demo/callback', async (c) => {
    const query = c.req.query()
    const base = ctx.issuerOf(c)
    // The code is echoed into a shell line to paste: only a code this service issued, and with
    // the client it was issued to. Only the demo client's secret is published; any other
    // client's stays a placeholder.
    const code = query.code && /^[A-Za-z0-9_-]{1,256}$/.test(query.code) ? await findCodeClient(ctx.deps.reader, query.code) : undefined
    const secret = code?.clientId === DEMO_CLIENT_ID ? DEMO_CLIENT_SECRET : 'YOUR_CLIENT_SECRET'
    const curl = code
      ? `curl -s -X POST ${base}/oauth/token -d grant_type=authorization_code -d client_id=${code.clientId} -d client_secret=${secret} --data-urlencode redirect_uri=${code.redirectUri} -d code=${query.code}`
      : null
    return c.html(<DemoCallbackPage query={query} curl={curl} />)
  })
}
