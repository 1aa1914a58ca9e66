// Interface E's search thread (src/interfaces/conversations/search-worker.ts) as one CommonJS
// source text. dist/ embeds it as the MEDPANEL_SEARCH_WORKER constant, the single executable
// carries it as an asset, and the pool starts threads from that text (`new Worker(text, {eval:
// true})`), so no build needs a file beside it to point a worker at: dist/, Deno and the
// executable run the same text.
import {build} from 'esbuild'
import {join} from 'node:path'

/** Returns `define` entries that embed the thread's source. */
export async function searchWorkerDefine(root) {
  return {MEDPANEL_SEARCH_WORKER: JSON.stringify(await searchWorkerSource(root))}
}

/** The thread's source text (the single executable carries it as an asset instead). */
export async function searchWorkerSource(root) {
  const result = await build({
    entryPoints: [join(root, 'src/interfaces/conversations/search-worker.ts')],
    write: false,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    keepNames: true,
    // The thread loads better-sqlite3 from the path the pool hands it (it cannot resolve packages
    // from medpanel's directory); node:sqlite is built in.
    external: ['better-sqlite3'],
    // betterSqlite3Location (import.meta) is for the thread's parent, never called in the thread.
    logOverride: {'empty-import-meta': 'silent'},
    logLevel: 'warning',
  })
  return result.outputFiles[0].text
}
