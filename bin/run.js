#!/usr/bin/env node
// The production entry: the CLI is the esbuild bundle under dist/ (built by `npm ci`), with the
// command manifest beside package.json. Never looks for TypeScript sources.
import {dirname} from 'node:path'
import {fileURLToPath} from 'node:url'
import {runCli} from '../dist/cli.js'

await runCli({root: dirname(dirname(fileURLToPath(import.meta.url)))})
