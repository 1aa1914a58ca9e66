/**
 * The entry of the single executable (Node's SEA). Unlike bin/run.js it finds nothing on disk:
 * package.json and the command manifest are bundled in (the manifest by scripts/build-exe.mjs),
 * and oclif is handed both instead of looking for them beside the program.
 */
import type * as Interfaces from '@oclif/core/interfaces'
import {dirname} from 'node:path'
import pjson from '../package.json' with {type: 'json'}
import {runCli} from './cli/main.js'

declare const MEDPANEL_MANIFEST: Interfaces.Manifest

void runCli({root: dirname(process.execPath), pjson: pjson as unknown as Interfaces.PJSON, manifest: MEDPANEL_MANIFEST})
