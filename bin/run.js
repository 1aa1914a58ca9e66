#!/usr/bin/env node
// The production entry: every command lives in the esbuild bundle under dist/ (built by `npm ci`).
// Never look for TypeScript sources, whatever NODE_ENV says: the bundle is the program.
import {execute, settings} from '@oclif/core'

settings.enableAutoTranspile = false
// oclif asks the user database for a login shell when SHELL is unset, which throws for a user with
// no passwd entry (a container's numeric uid, systemd's DynamicUser). medpanel needs no shell.
process.env.SHELL ??= ''
await execute({dir: import.meta.url})
