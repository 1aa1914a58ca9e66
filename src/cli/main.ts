import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Command} from '@oclif/core/command'
import {Config, Plugin} from '@oclif/core/config'
import {execute} from '@oclif/core/execute'
import {handle} from '@oclif/core/handle'
import type * as Interfaces from '@oclif/core/interfaces'
import {settings} from '@oclif/core/settings'
import {COMMAND_LOADERS} from '../../commands/index.js'
import {COMMAND_TOPICS} from '../../commands/topics.js'
import {MedpanelHelp} from './help.js'
import {versionAnswer} from './version.js'

/** The parts of oclif's Plugin that command lookup goes through (not in its public types). */
interface PluginInternals {
  isRoot: boolean
  options: {ignoreManifest?: boolean}
  commandIDs: string[]
  commandCache?: Record<string, Command.Class>
  findCommand(id: string, options?: {must?: boolean}): Promise<Command.Class | undefined>
  loadCommandsFromTarget(): Promise<Record<string, Command.Class> | undefined>
  _manifest(): Promise<Interfaces.Manifest>
}

/** Marks in --help the flags a command asks for when missing (BaseCommand.asked), once per class. */
function markAsked(command: Command.Class): Command.Class {
  const asked = (command as {asked?: string[]}).asked ?? []
  const flags = command.flags as Record<string, {description?: string; medpanelMarked?: boolean}> | undefined
  if (!flags) return command
  for (const name of asked) {
    const flag = flags[name]
    if (flag && !flag.medpanelMarked) flags[name] = {...flag, description: `${flag.description ?? ''} [required; asked for at a terminal]`.trim(), medpanelMarked: true}
  }
  return command
}

let installed = false
/** What the root plugin's manifest comes from: given, built by loading every command, or oclif.manifest.json. */
let manifestSource: Interfaces.Manifest | 'load' | 'file' = 'file'

/**
 * Points oclif's lookup for medpanel's own commands at COMMAND_LOADERS, so running a command
 * imports that command alone. oclif's explicit strategy would import one module holding every
 * command; with the manifest written at build time (help, listing, flag parsing all read it),
 * nothing else needs the command classes.
 */
function useCommandLoaders(): void {
  if (installed) return
  installed = true
  const proto = Plugin.prototype as unknown as PluginInternals
  const {findCommand, loadCommandsFromTarget, _manifest} = proto
  proto.findCommand = async function (this: PluginInternals, id, options) {
    const load = this.isRoot ? COMMAND_LOADERS[id] : undefined
    if (!load) return findCommand.call(this, id, options)
    const command = markAsked(await load())
    command.id = id
    Object.assign(command, {plugin: this})
    return command
  }
  proto.loadCommandsFromTarget = async function (this: PluginInternals) {
    if (!this.isRoot) return loadCommandsFromTarget.call(this)
    this.commandCache ??= Object.fromEntries(await Promise.all(Object.entries(COMMAND_LOADERS).map(async ([id, load]) => [id, markAsked(await load())] as const)))
    return this.commandCache
  }
  proto._manifest = async function (this: PluginInternals) {
    if (!this.isRoot || manifestSource === 'file') return _manifest.call(this)
    if (manifestSource === 'load') {
      this.options.ignoreManifest = true
      return _manifest.call(this)
    }
    this.commandIDs = Object.keys(manifestSource.commands)
    return manifestSource
  }
}

export interface CliOptions {
  /** The directory holding package.json (a checkout), or the executable's directory. */
  root: string
  /** package.json itself, where it is not on disk beside `root`. */
  pjson?: Interfaces.PJSON
  /**
   * The command manifest, where it is not on disk beside `root` (the executable), or `load` to
   * build it from the commands themselves (development, and the build that writes the file).
   */
  manifest?: Interfaces.Manifest | 'load'
}

async function load(options: CliOptions): Promise<Config> {
  settings.enableAutoTranspile = false
  // oclif asks the user database for a login shell when SHELL is unset, which throws for a user
  // with no passwd entry (a container's numeric uid, systemd's DynamicUser). medpanel needs no shell.
  process.env.SHELL ??= ''
  manifestSource = options.manifest ?? 'file'
  useCommandLoaders()
  const pjson = options.pjson ?? JSON.parse(readFileSync(join(options.root, 'package.json'), 'utf8'))
  return Config.load({root: options.root, pjson: withoutPluginsUnlessAsked(pjson)})
}

/**
 * Shell completion comes from @oclif/plugin-autocomplete, which oclif would otherwise load (its
 * package, its manifest) on every start. It is loaded only for `medpanel autocomplete …`, so
 * `--version` and every other command start as fast as without it.
 */
function withoutPluginsUnlessAsked(pjson: Interfaces.PJSON): Interfaces.PJSON {
  // Help is the other exception (a topic's listing too): the root listing shows `autocomplete`, and `help autocomplete` works.
  const first = process.argv[2]?.toLowerCase()
  const topic = COMMAND_TOPICS.some((t) => t.name === first)
  if (first === 'autocomplete' || topic || isHelpRequest(pjson, process.argv.slice(2)) || !pjson.oclif?.plugins) return pjson
  const {plugins: _plugins, ...oclif} = pjson.oclif
  return {...pjson, oclif}
}

/**
 * Whether oclif would answer these arguments with help (its own test, main.ts helpAddition): no
 * arguments, or a help flag before any `--`. `--version` wins over help there, and here too.
 */
function isHelpRequest(pjson: Interfaces.PJSON, argv: string[]): boolean {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '-h') return true
  const helpFlags = ['--help', ...(pjson.oclif?.additionalHelpFlags ?? [])]
  for (const arg of argv) {
    if (arg === '--' || arg === '--version') return false
    if (helpFlags.includes(arg)) return true
  }
  return false
}

/** Edit distance, for "did you mean" on a mistyped command. */
function distance(a: string, b: string): number {
  const row = Array.from({length: b.length + 1}, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = current
    }
  }
  return row[b.length]!
}

/**
 * The conventions people expect of a CLI, before oclif sees the arguments: `help [COMMAND]` and
 * `-h` are `--help`, `version` and `-v` are `--version`, `--version --json` prints JSON, and an
 * unknown command is one `Error:` line with the nearest names and exit 1 (like every other user
 * error), not oclif's multi-line block with exit 2. Returns the arguments for oclif, or undefined
 * when it answered itself.
 */
function conventions(config: Config, argv: string[]): string[] | undefined {
  const [first, ...rest] = argv
  if (first === 'help') {
    if (rest.length === 0) return ['--help']
    // `help NAME` refuses an unknown NAME the way running it would.
    const checked = conventions(config, rest)
    return checked && [...checked, '--help']
  }
  if (first === '-h') return ['--help', ...rest]
  if (first === 'version' || first === '-v') return conventions(config, ['--version', ...rest])
  const version = versionAnswer(config.pjson, argv)
  if (version !== undefined) {
    process.stdout.write(version)
    return undefined
  }
  const command = first === undefined || first.startsWith('-') ? undefined : config.findCommand(first)
  const stray = rest.find((arg) => !arg.startsWith('-'))
  if (command && stray !== undefined && Object.keys(command.args ?? {}).length === 0 && rest[0] === stray) {
    // oclif would read `list-clients foo` as a command named "list-clients foo" and fail in its
    // own way (exit 2); a command that takes no argument says so like any other mistake.
    process.stderr.write(`Error: ${first} takes no arguments (got "${stray.slice(0, 60)}"); see ${config.bin} ${first} --help\n`)
    process.exitCode = 1
    return undefined
  }
  const topic = first === undefined || command ? undefined : COMMAND_TOPICS.find((t) => t.name === first.toLowerCase())
  if (topic) {
    // `medpanel clients` (and `help clients`): the commands of that heading of the root help, as gh lists a group's.
    new MedpanelHelp(config, COMMAND_TOPICS, config.pjson.oclif.helpOptions).showTopic(topic)
    return undefined
  }
  if (first !== undefined && !first.startsWith('-') && !command) {
    const near = config.commandIDs
      .map((id) => ({id, d: distance(first, id)}))
      .filter(({id, d}) => d <= Math.max(2, Math.floor(first.length / 3)) || id.startsWith(first) || first.startsWith(id))
      .sort((a, b) => a.d - b.d)
      .slice(0, 3)
      .map(({id}) => id)
    const hint = near.length > 0 ? ` (did you mean ${near.join(', ')}?)` : ''
    process.stderr.write(`Error: "${first.slice(0, 60)}" is not a medpanel command${hint}; see ${config.bin} --help\n`)
    process.exitCode = 1
    return undefined
  }
  return argv
}

/** Runs the CLI: bin/run.js in a checkout, src/exe.ts in the single executable. */
export async function runCli(options: CliOptions): Promise<void> {
  const config = await load(options)
  const args = conventions(config, process.argv.slice(2))
  if (args === undefined) return
  // oclif would find a help class by importing the file package.json's oclif.helpClass names, and
  // neither the bundle nor the single executable has such a file: help is answered here instead,
  // with the class compiled in, the same way in a checkout, the executable and under Deno.
  if (isHelpRequest(config.pjson, args)) {
    try {
      await new MedpanelHelp(config, COMMAND_TOPICS, config.pjson.oclif.helpOptions).showHelp(args)
    } catch (error) {
      await handle(error as Error)
    }
    return
  }
  await execute({args, dir: options.root, loadOptions: config})
}

/** The manifest oclif would build by loading every command; written at build time. */
export async function buildManifest(root: string): Promise<Interfaces.Manifest> {
  const config = await load({root, manifest: 'load'})
  const rootPlugin = config.getPluginsList().find((plugin) => plugin.isRoot) as unknown as {manifest: Interfaces.Manifest}
  return rootPlugin.manifest
}

/**
 * Forgets the environment read, before a further command in this process: the test suite's
 * in-process runner (test/helpers/in-process-cli.ts) runs many commands in one process, each with
 * the environment a process of its own would have had, read (and refused if bad) as it starts.
 */
export {forgetEnvironment} from '../config.js'
