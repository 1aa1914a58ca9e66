#!/usr/bin/env node
// The production entry: the CLI is the esbuild bundle under dist/ (built by `npm ci`), with the
// command manifest beside package.json. Never looks for TypeScript sources. A version request is
// answered from package.json before the CLI itself is loaded.
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {versionAnswer} from '../dist/version.js'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const version = versionAnswer(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')), process.argv.slice(2))
if (version !== undefined) process.stdout.write(version)
else await (await import('../dist/cli.js')).runCli({root})
