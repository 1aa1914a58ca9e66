// Bundles the CLI into dist/: dist/cli.js is the entry bin/run.js loads (after dist/version.js,
// which answers --version alone), and each command lands in its own chunk that is imported only
// when that command runs (shared code in shared chunks).
// oclif is bundled too: one file loads faster than its hundreds. Only the native SQLite addon stays
// in node_modules. Then writes oclif.manifest.json, which lets help, listing and parsing run
// without importing any command.
//
//   node scripts/build.mjs [--out DIR] [--manifest FILE]
//
// --out DIR        where the bundle goes (default dist; emptied first)
// --manifest FILE  where the manifest goes (default oclif.manifest.json, which bin/run.js reads).
//                  scripts/build-image.mjs builds into a directory of its own with both, so that
//                  building an image never deletes the dist/ a running `npm start` or test uses.
import {build} from 'esbuild'
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {parseArgs} from 'node:util'
import {searchWorkerDefine} from './search-worker-bundle.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const {values} = parseArgs({
  args: process.argv.slice(2),
  options: {out: {type: 'string', default: join(root, 'dist')}, manifest: {type: 'string', default: join(root, 'oclif.manifest.json')}},
})
const out = resolve(values.out)

rmSync(out, {recursive: true, force: true, maxRetries: 3})
await build({
  entryPoints: {cli: join(root, 'src/cli/main.ts'), version: join(root, 'src/cli/version.ts')},
  outdir: out,
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

const manifestFile = resolve(values.manifest)
rmSync(manifestFile, {force: true})
mkdirSync(dirname(manifestFile), {recursive: true})
const {buildManifest} = await import(pathToFileURL(join(out, 'cli.js')).href)
writeFileSync(manifestFile, JSON.stringify(await buildManifest(root)))
