// Bundles the CLI into dist/: dist/launch.js is the entry bin/run.js loads (it answers --version
// alone, else imports dist/cli.js), and each command lands in its own chunk that is imported only
// when that command runs (shared code in shared chunks). dist/cjs/ holds the same files as
// CommonJS, which Node runs with V8's code cache (src/cli/code-cache.ts); Deno runs the ES modules.
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
import {build, transform} from 'esbuild'
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {parseArgs} from 'node:util'
import {oclifTrim} from './oclif-trim.mjs'
import {searchWorkerDefine} from './search-worker-bundle.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const {values} = parseArgs({
  args: process.argv.slice(2),
  options: {out: {type: 'string', default: join(root, 'dist')}, manifest: {type: 'string', default: join(root, 'oclif.manifest.json')}},
})
const out = resolve(values.out)

const banner = "import {createRequire as __cr} from 'node:module'; const require = __cr(import.meta.url);"

rmSync(out, {recursive: true, force: true, maxRetries: 3})
const {metafile} = await build({
  entryPoints: {cli: join(root, 'src/cli/main.ts'), launch: join(root, 'src/cli/launch.ts')},
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
  banner: {js: banner},
  metafile: true,
  plugins: [oclifTrim()],
})

// The CommonJS copy, file for file: a chunk's imports become require() of the same chunk there,
// and import.meta.url the file's own URL.
const cjs = join(out, 'cjs')
mkdirSync(join(cjs, 'chunks'), {recursive: true})
writeFileSync(join(cjs, 'package.json'), '{"type":"commonjs"}\n')
for (const file of Object.keys(metafile.outputs).filter((name) => name.endsWith('.js'))) {
  const name = relative(out, resolve(file))
  const source = readFileSync(join(out, name), 'utf8')
    .replace(banner, '')
    .replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n')
  const {code} = await transform(source, {
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    minifySyntax: true,
    // import() of a chunk becomes require(): code compiled through vm.Script cannot import().
    supported: {'dynamic-import': false},
    define: {'import.meta.url': '__medpanel_url'},
    banner: "var __medpanel_url=require('node:url').pathToFileURL(__filename).href;",
    logLevel: 'warning',
  })
  writeFileSync(join(cjs, name), code)
}

const manifestFile = resolve(values.manifest)
rmSync(manifestFile, {force: true})
mkdirSync(dirname(manifestFile), {recursive: true})
const {buildManifest} = await import(pathToFileURL(join(out, 'cli.js')).href)
writeFileSync(manifestFile, JSON.stringify(await buildManifest(root)))
