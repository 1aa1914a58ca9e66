/**
 * The entry of the single executable (Node's SEA). Unlike bin/run.js it finds nothing on disk:
 * package.json and the command manifest are bundled in (the manifest by scripts/build-exe.mjs),
 * and oclif is handed both instead of looking for them beside the program. A version request is
 * answered before the CLI is loaded: the bundle turns the import below into a module that runs
 * only when it is reached.
 */
import type * as Interfaces from '@oclif/core/interfaces'
import {dirname} from 'node:path'
import pjson from '../package.json' with {type: 'json'}
import {versionAnswer} from './cli/version.js'

declare const MEDPANEL_MANIFEST: Interfaces.Manifest

/**
 * The executable carries no plugins (shell completion needs the npm install): package.json's
 * list of them is left out, or oclif would look for each on disk and warn on every help.
 */
const {plugins: _plugins, ...oclif} = pjson.oclif
const bundled = {...pjson, oclif} as unknown as Interfaces.PJSON

const version = versionAnswer(pjson, process.argv.slice(2))
if (version !== undefined) process.stdout.write(version)
else void import('./cli/main.js').then(({runCli}) => runCli({root: dirname(process.execPath), pjson: bundled, manifest: MEDPANEL_MANIFEST}))
