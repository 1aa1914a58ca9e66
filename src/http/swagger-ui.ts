import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import type {Hono} from 'hono'
import {html} from 'hono/html'
import {exeAsset} from '../exe-assets.js'

/**
 * The interactive API reference at /docs: Swagger UI, served from the swagger-ui-dist package's own
 * files (no CDN, so the page works offline and on a closed network), rendering /openapi.json. The
 * single executable has no node_modules: it carries the two files as assets (exe-assets.ts).
 */

interface Assets {
  js: string
  css: string
}

let assets: Assets | undefined

function swaggerAssets(): Assets {
  if (assets) return assets
  const js = exeAsset('swagger-ui-bundle.js')
  const css = exeAsset('swagger-ui.css')
  if (js !== undefined && css !== undefined) {
    assets = {js, css}
  } else {
    const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
    assets = {js: readFileSync(join(dir, 'swagger-ui-bundle.js'), 'utf8'), css: readFileSync(join(dir, 'swagger-ui.css'), 'utf8')}
  }
  return assets
}

/** What the page may load: its own scripts and styles, the document, and images it draws inline. */
const POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

const PAGE_HEADERS = {'Content-Security-Policy': POLICY, 'Referrer-Policy': 'same-origin', 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY'}
const ASSET_CACHE = 'public, max-age=86400'

/** Starts Swagger UI on the page (a script of its own: the policy allows no inline script). */
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({url: '/openapi.json', dom_id: '#reference', deepLinking: true, tryItOutEnabled: false, displayOperationId: true, docExpansion: 'list', defaultModelsExpandDepth: 0})
})`

// biome-ignore lint/suspicious/noExplicitAny: mounted on the app whatever its environment and schema types
export function swaggerUiRoutes(app: Hono<any, any, any>): void {
  app.get('/docs', (c) =>
    c.html(
      html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>medpanel API reference</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="reference"></div>
<noscript><p>The reference needs JavaScript; the document itself is <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`,
      200,
      PAGE_HEADERS,
    ),
  )
  app.get('/docs/swagger-ui.css', (c) => c.body(swaggerAssets().css, 200, {'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': ASSET_CACHE}))
  app.get('/docs/swagger-ui-bundle.js', (c) => c.body(swaggerAssets().js, 200, {'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': ASSET_CACHE}))
  app.get('/docs/init.js', (c) => c.body(INIT, 200, {'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': ASSET_CACHE}))
}
