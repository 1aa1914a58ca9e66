import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync} from 'node:fs'
import {createServer as createNetServer} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {expect} from 'vitest'
import {onPostgres, storeFlags} from './store.js'
import {runInProcess} from './in-process-cli.js'
import {COMMAND_TOPICS} from '../../commands/topics.js'

/** The built CLI entry (vitest's globalSetup, test/global-setup.ts, rebuilds dist/ when it is stale). */
export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The Deno binary the `deno` dev dependency installs (its platform package holds it). */
export const DENO = join(ROOT, 'node_modules/@deno/linux-x64-glibc/deno')
/** The single executable, as `npm run build:exe` writes it. */
export const EXECUTABLE = join(ROOT, 'dist/medpanel')

/**
 * How tests start the CLI, picked by MEDPANEL_TEST_CLI: `node` (bin/run.js on the Node running
 * the tests), `deno` (bin/run.js under Deno) or `exe` (dist/medpanel). Under a Deno-run suite
 * the default is Deno. Every helper that spawns the CLI goes through this.
 */
export interface Launcher {
  command: string
  args: string[]
  /** Replaces the environment the CLI sees (default: this process's). */
  env?: Record<string, string>
}

export function cliCommand(): Launcher {
  const chosen = process.env.MEDPANEL_TEST_CLI || ('Deno' in globalThis ? 'deno' : 'node')
  switch (chosen) {
    case 'node':
      return {command: process.execPath, args: [BIN]}
    case 'deno':
      return {command: 'Deno' in globalThis ? process.execPath : DENO, args: ['run', '-A', BIN]}
    case 'exe':
      return {command: EXECUTABLE, args: []}
    default:
      throw new Error(`MEDPANEL_TEST_CLI must be node, deno or exe (got "${chosen}")`)
  }
}

/**
 * The command line that runs the CLI with `args`, as argv (first element the program). On a
 * PostgreSQL run, a store file (`--db FILE`) becomes a database of its own (helpers/store.ts); the
 * reference partner keeps its SQLite file.
 */
export function cliArgv(args: string[], launcher: Launcher = cliCommand()): [string, ...string[]] {
  // partner-serve keeps its own SQLite file; copy-store's --db is the SQLite side of a copy by definition.
  const rewrite = onPostgres && args[0] !== 'partner-serve' && args[0] !== 'copy-store' && !args.includes('--database-url')
  return [launcher.command, ...launcher.args, ...(rewrite ? withStoreFlags(args) : args)]
}

function withStoreFlags(args: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--db' && i + 1 < args.length) out.push(...storeFlags(args[++i]!))
    else if (arg.startsWith('--db=')) out.push(...storeFlags(arg.slice(5)))
    else out.push(arg)
  }
  return out
}

/** A new empty temporary directory for a test's store files. */
export function tempDir(prefix = 'medpanel-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

let scratch: string | undefined

/**
 * The working directory of every CLI the helpers start: a temporary directory of this test
 * process while the tests run from the checkout, so a command that falls back to ./medpanel.db
 * (a refusal test run before its fix, or a regression) writes that store and its key file there,
 * never into the repository (a key made that way was once committed). A test that chdir()s to a
 * directory of its own keeps that one.
 */
export function cliCwd(): string {
  const here = realpathSync(process.cwd())
  const root = realpathSync(ROOT)
  if (here !== root && !here.startsWith(`${root}/`)) return here
  scratch ??= tempDir('medpanel-cwd-')
  return scratch
}

export interface CliResult {
  status: number
  stdout: string
  stderr: string
}

/**
 * How long a CLI run or a server's start may take before the helpers call it hung. Generous: on a
 * loaded 2-core machine, seeding the event-loop test's 20,000 posts passed a minute.
 */
const HUNG_MS = 300_000

/**
 * Whether `cli()` may run these arguments on the in-process runner (helpers/in-process-cli.ts)
 * rather than a process: the default launcher on Node (not Deno, not the executable, not a
 * launcher a test chose), MEDPANEL_TEST_IN_PROCESS not 0, and a store named on the command line
 * or in the environment, or none opened at all (help, version), so no command can fall back to
 * ./medpanel.db in this process's directory.
 */
function inProcess(argv: string[], env: NodeJS.ProcessEnv, launcher: Launcher): boolean {
  if (process.env.MEDPANEL_TEST_IN_PROCESS === '0' || 'Deno' in globalThis) return false
  if (launcher.env !== undefined || launcher.command !== process.execPath || launcher.args.length !== 1 || launcher.args[0] !== BIN) return false
  const named = argv.some((arg) => arg === '--db' || arg.startsWith('--db=') || arg === '--database-url' || arg.startsWith('--database-url='))
  return named || env.MEDPANEL_DB !== undefined || env.MEDPANEL_DATABASE_URL !== undefined || opensNoStore(argv)
}

/** Help, a topic's listing and the version: answered before any command runs, so no store is opened. */
function opensNoStore(argv: string[]): boolean {
  const first = argv[0]
  if (first === undefined || ['help', '-h', '--help', 'version', '-v', '--version'].includes(first)) return true
  if (COMMAND_TOPICS.some((topic) => topic.name === first.toLowerCase())) return true
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--help')
}

/**
 * Runs the real CLI to completion with stdin closed (as CI does): on the in-process runner where
 * it can stand in for a process (see inProcess), else as a process of its own.
 */
export function cli(args: string[], env: Record<string, string> = {}, launcher: Launcher = cliCommand()): CliResult {
  const [command, ...argv] = cliArgv(args, launcher)
  const environment = {...(launcher.env ?? process.env), ...env}
  if (inProcess(argv.slice(launcher.args.length), environment, launcher)) return runInProcess(argv.slice(launcher.args.length), environment)
  const result = spawnSync(command, argv, {cwd: cliCwd(), encoding: 'utf8', env: environment, stdio: ['ignore', 'pipe', 'pipe'], timeout: HUNG_MS})
  return {status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr}
}

/** Runs the CLI with --json and parses stdout; throws with stderr when it fails. */
export function cliJson<T = any>(args: string[], env: Record<string, string> = {}, launcher: Launcher = cliCommand()): T {
  const result = cli([...args, '--json'], env, launcher)
  if (result.status !== 0) throw new Error(`medpanel ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return JSON.parse(result.stdout) as T
}

export interface RunningCli {
  child: ChildProcess
  url: string
  stderr: () => string
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/**
 * Starts a long-running command (serve, partner-serve) on port 0 with --json and resolves once it
 * printed its startup JSON (which must carry `url`).
 */
export function startCli(args: string[], env: Record<string, string> = {}, launcher: Launcher = cliCommand()): Promise<RunningCli> {
  return new Promise((resolve, reject) => {
    const [command, ...argv] = cliArgv([...args, '--json'], launcher)
    const child = spawn(command, argv, {cwd: cliCwd(), env: {...(launcher.env ?? process.env), ...env}, stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`timed out starting ${args.join(' ')}: ${err}`)), HUNG_MS)
    child.stderr!.on('data', (d) => (err += d))
    child.stdout!.on('data', (d) => {
      out += d
      try {
        const info = JSON.parse(out) as {url: string}
        clearTimeout(timer)
        resolve({
          child,
          url: info.url,
          stderr: () => err,
          stop: (signal = 'SIGTERM') =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode)
              child.once('exit', (code) => done(code))
              // process.kill, not child.kill: Deno's child_process reports any child it signalled
              // itself as killed by that signal, even one that caught it and exited 0.
              process.kill(child.pid!, signal)
            }),
        })
      } catch {
        // not a whole JSON document yet
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${args.join(' ')} exited ${code} before it was ready: ${err}`))
    })
  })
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address() as {port: number}
      server.close(() => resolve(port))
    })
  })
}

/** The real path of the `node` that PATH finds (bin/medpanel's `#!/usr/bin/env node`), if any. */
function pathNode(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v node'], {encoding: 'utf8'}).stdout.trim()
  try {
    return found ? realpathSync(found) : undefined
  } catch {
    return undefined
  }
}

/**
 * A directory to put first on PATH so that `medpanel` runs the CLI the way this test run does. On
 * the Node on PATH that is the checkout's bin/ itself (bin/medpanel is the README's recipe); under
 * another runtime or Node, a one-line `medpanel` script in `dir`.
 */
export function medpanelOnPath(dir: string, launcher: Launcher = cliCommand()): string {
  if (realpathSync(launcher.command) === pathNode() && launcher.args.length === 1 && launcher.args[0] === BIN) return dirname(BIN)
  const bin = join(dir, '.bin')
  mkdirSync(bin, {recursive: true})
  writeFileSync(join(bin, 'medpanel'), `#!/bin/sh\nexec ${[launcher.command, ...launcher.args].map((part) => `'${part}'`).join(' ')} "$@"\n`)
  chmodSync(join(bin, 'medpanel'), 0o755)
  return bin
}

/**
 * The argv that registers client Acme (https://acme.example and its logo) with `redirectUris`
 * (comma-separated), for tests that need a sign-on client; `--grant` and other flags follow it.
 */
export function acmeRegistration(store: string[], redirectUris = 'https://acme.example/cb'): string[] {
  return ['register-client', ...store, '--name', 'Acme', '--url', 'https://acme.example', '--logo-url', 'https://acme.example/l.png', '--redirect-uri', redirectUris]
}

/**
 * The argv that adds member Ana Ruiz, an oncologist in the US, signing in with `login` (by default
 * ana@clinic.example and "correct horse"), for tests that need a member; other flags follow it.
 */
export function memberRegistration(store: string[], login: {email?: string; password?: string} = {}): string[] {
  const {email = 'ana@clinic.example', password = 'correct horse'} = login
  return ['add-member', ...store, '--email', email, '--password', password, '--first-name', 'Ana', '--last-name', 'Ruiz', '--country', 'US', '--specialty', 'Oncology']
}

/**
 * The argv that registers a partner client named P (its partner URL `partnerUrl`), for tests that
 * need one; credentials and other flags follow it.
 */
export function partnerRegistration(store: string[], partnerUrl: string): string[] {
  return ['register-client', ...store, '--name', 'P', '--url', 'https://p.example', '--logo-url', 'https://p.example/l.png', '--grant', 'partner', '--partner-url', partnerUrl]
}

/** A refused command as users must see it: exit 1, nothing on stdout, one `Error:` line matching `pattern`. */
export function expectUserError(result: CliResult, pattern: RegExp): void {
  expect(result.status, result.stderr).toBe(1)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trim().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^Error: /)
  expect(lines[0]).toMatch(pattern)
}
