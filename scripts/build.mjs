// Bundles every command (and everything they import: migrations, data, page templates) into one
// ESM file, so the CLI needs nothing from the source tree at run time. Native and heavy runtime
// packages stay external and are resolved from node_modules.
import {build} from 'esbuild'
import {readFile} from 'node:fs/promises'

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))

await build({
  entryPoints: {'commands/index': 'commands/index.ts'},
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Only what cannot be bundled stays outside: the native SQLite addon, and oclif, which reads its own
  // files and our package.json at run time. Everything else is inlined, which also keeps start-up
  // memory down (hundreds of small ESM modules cost more to load than one file).
  external: ['better-sqlite3', '@oclif/core'],
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx',
  logLevel: 'warning',
  banner: {js: "import {createRequire as __cr} from 'node:module'; const require = __cr(import.meta.url);"},
})
