// Bundles the CLI into dist/: dist/cli.js is the entry bin/run.js loads (after dist/version.js,
// which answers --version alone), and each command lands in its own chunk that is imported only
// when that command runs (shared code in shared chunks).
// oclif is bundled too: one file loads faster than its hundreds. Only the native SQLite addon stays
// in node_modules. Then writes oclif.manifest.json, which lets help, listing and parsing run
// without importing any command.
import {build} from 'esbuild'
import {rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {searchWorkerDefine} from './search-worker-bundle.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

rmSync(join(root, 'dist'), {recursive: true, force: true, maxRetries: 3})
await build({
  entryPoints: {cli: join(root, 'src/cli/main.ts'), version: join(root, 'src/cli/version.ts')},
  outdir: join(root, 'dist'),
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  // Smaller code parses and compiles faster, and every CLI start compiles what it loads.
  minifyWhitespace: true,
  minifySyntax: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // oclif reaches for TypeScript compilers only in development mode, which the bundle never uses.
  external: ['better-sqlite3', 'typescript', 'ts-node', 'tsx', 'tsx/*'],
  alias: {'@inquirer/editor': join(root, 'src/cli/no-editor-prompt.ts')},
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx',
  logLevel: 'warning',
  // Interface E's search thread, embedded as source text (see search-worker-bundle.mjs).
  define: await searchWorkerDefine(root),
  // Bundled CommonJS packages (oclif among them) call require() for Node's built-in modules.
  banner: {js: "import {createRequire as __cr} from 'node:module'; const require = __cr(import.meta.url);"},
})

const manifestFile = join(root, 'oclif.manifest.json')
rmSync(manifestFile, {force: true})
const {buildManifest} = await import(join(root, 'dist/cli.js'))
writeFileSync(manifestFile, JSON.stringify(await buildManifest(root)))
