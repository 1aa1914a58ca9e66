#!/usr/bin/env node
// The production entry: every command lives in the esbuild bundle under dist/ (built by `npm ci`).
// Never look for TypeScript sources, whatever NODE_ENV says: the bundle is the program.
import {execute, settings} from '@oclif/core'

settings.enableAutoTranspile = false
await execute({dir: import.meta.url})
