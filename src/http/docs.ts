import {html, raw} from 'hono/html'

interface OpenApiLike {
  paths?: object
}
type Operation = {summary?: string; tags?: string[]}

/** A plain, self-contained index of the API from the generated OpenAPI document (no CDN assets). */
export function docsPage(doc: OpenApiLike) {
  const rows: string[] = []
  for (const [path, ops] of Object.entries(doc.paths ?? {}) as [string, Record<string, Operation>][]) {
    for (const [method, op] of Object.entries(ops)) {
      rows.push(
        `<tr><td>${escapeHtml(op.tags?.[0] ?? '')}</td><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(op.summary ?? '')}</td></tr>`,
      )
    }
  }
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>medpanel API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td{border-bottom:1px solid #ddd;padding:.4rem .8rem}</style></head>
<body><h1>medpanel API</h1><p>Machine-readable: <a href="/openapi.json">/openapi.json</a></p>
<table>${raw(rows.join(''))}</table></body></html>`
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
}
