/**
 * The `pg` module, loaded once, on first use (SQLite users never load it).
 *
 * As it loads, pg asks whether it runs on Cloudflare Workers: it looks for a global `navigator`
 * and, finding none, constructs a Fetch `Response` to see whether the runtime adds Cloudflare's
 * `cf` field. Node 20 has no `navigator`, and its first `Response` loads Node's bundled undici:
 * 30 ms of CPU, about a tenth of a command's whole run on PostgreSQL. Node 21+ and Deno define
 * `navigator`, whose user agent is not Cloudflare's, so pg decides at once. On Node 20 the same
 * answer is lent for the load (what Node 21 defines: `Node.js/` and the major version), and taken
 * back after.
 */
export function loadPg(): Promise<typeof import('pg')> {
  loading ??= importWithNavigator()
  return loading
}

let loading: Promise<typeof import('pg')> | undefined

async function importWithNavigator(): Promise<typeof import('pg')> {
  const global = globalThis as {navigator?: unknown}
  if (global.navigator !== undefined) return import('pg')
  Object.defineProperty(global, 'navigator', {value: {userAgent: `Node.js/${process.versions.node.split('.')[0]}`}, configurable: true, writable: true})
  try {
    return await import('pg')
  } finally {
    delete global.navigator
  }
}
