#!/usr/bin/env node
// The production entry: the CLI is the esbuild bundle under dist/ (built by `npm ci`), with the
// command manifest beside package.json. Never looks for TypeScript sources. A version request is
// answered from package.json before the CLI itself is loaded (src/cli/launch.ts).
//
// Node runs the bundle's CommonJS copy (dist/cjs/), which it compiles with V8's code cache
// (src/cli/code-cache.ts). Deno runs the ES modules, and so does `autocomplete`: oclif imports
// that plugin, an ES module, which code compiled through the cache cannot do on Node 20.
import {createRequire} from 'node:module'
import {dirname} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
if ('Deno' in globalThis || process.argv[2] === 'autocomplete') await (await import('../dist/launch.js')).launch(root, {codeCache: false})
else await createRequire(import.meta.url)('../dist/cjs/launch.js').launch(root, {codeCache: true})
