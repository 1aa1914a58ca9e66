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
  external: [...Object.keys(pkg.dependencies)],
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx',
  logLevel: 'warning',
  banner: {js: "import {createRequire as __cr} from 'node:module'; const require = __cr(import.meta.url);"},
})
