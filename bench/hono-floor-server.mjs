// The framework's floor for bench:signon and bench:introspect: the HTTP stack medpanel is built on
// (Hono on @hono/node-server, the same versions) with one route and nothing else, answering GET and
// POST on / with the same JSON text as the bare ceiling, without reading the request body (as the
// ceiling does not). No middleware, no logging, no store. Whatever medpanel's endpoints add per
// request is their own work on top of this; the ceiling minus this is what the framework costs.
// Usage: node bench/hono-floor-server.mjs JSON_TEXT; prints {"url"} once it listens.
import {serve} from '@hono/node-server'
import {Hono} from 'hono'

const text = process.argv[2] ?? '{"ok":true}'
const app = new Hono()
app.on(['GET', 'POST'], '/', (c) => c.body(text, 200, {'content-type': 'application/json'}))
serve({fetch: app.fetch, port: 0, hostname: '127.0.0.1'}, (info) => console.log(JSON.stringify({url: `http://127.0.0.1:${info.port}`})))
process.on('SIGTERM', () => process.exit(0))
