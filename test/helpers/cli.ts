import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The built CLI entry (`npm test` builds first). */
export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/** A new empty temporary directory for a test's store files. */
export function tempDir(prefix = 'medpanel-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export interface CliResult {
  status: number
  stdout: string
  stderr: string
}

/** Runs the real CLI to completion with stdin closed (as CI does). */
export function cli(args: string[], env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {encoding: 'utf8', env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000})
  return {status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr}
}

/** Runs the CLI with --json and parses stdout; throws with stderr when it fails. */
export function cliJson<T = any>(args: string[], env: Record<string, string> = {}): T {
  const result = cli([...args, '--json'], env)
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
export function startCli(args: string[], env: Record<string, string> = {}): Promise<RunningCli> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, '--json'], {env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`timed out starting ${args.join(' ')}: ${err}`)), 30_000)
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
              child.kill(signal)
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
