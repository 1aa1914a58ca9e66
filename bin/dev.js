#!/usr/bin/env -S node --import tsx
// Development entry: runs the TypeScript sources directly through tsx, no build needed, and reads
// the commands themselves rather than the manifest the build writes.
import {dirname} from 'node:path'
import {fileURLToPath} from 'node:url'
import {runCli} from '../src/cli/main.ts'

await runCli({root: dirname(dirname(fileURLToPath(import.meta.url))), manifest: 'load'})
