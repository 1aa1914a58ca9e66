#!/usr/bin/env node
// The production entry: every command lives in the esbuild bundle under dist/ (built by `npm ci`).
import {execute} from '@oclif/core'

await execute({dir: import.meta.url})
