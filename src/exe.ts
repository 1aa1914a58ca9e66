/**
 * The entry of the single executable (Node's SEA). Unlike bin/run.js it finds nothing on disk:
 * package.json and every command are bundled in, and oclif is handed both instead of looking
 * for them beside the program.
 */
import {Config, Plugin, execute, settings} from '@oclif/core'
import {dirname} from 'node:path'
import pjson from '../package.json' with {type: 'json'}
import {COMMANDS} from '../commands/index.js'

async function main(): Promise<void> {
  settings.enableAutoTranspile = false
  // As in bin/run.js: without SHELL, oclif reads the passwd entry, which may not exist.
  process.env.SHELL ??= ''
  // oclif's explicit strategy imports the command map from a file path; in the executable the map
  // is already here, so the root plugin is given it directly.
  const plugin = Plugin.prototype as unknown as {loadCommandsFromTarget: () => Promise<unknown>}
  plugin.loadCommandsFromTarget = async () => COMMANDS
  const root = dirname(process.execPath)
  const config = await Config.load({root, pjson: pjson as unknown as Config['pjson']})
  await execute({dir: root, loadOptions: config})
}

void main()
