import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {chmodSync, chownSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {acmeRegistration, cliArgv, cliJson, tempDir} from '../helpers/cli.js'

/*
 * Store errors that come from file permissions name the file or directory at fault, for reads,
 * writes, backup and restore. Root is not stopped by permissions, and the machine and CI run as
 * root: the CLI runs here as user nobody (65534), through setpriv or runuser, on files made for it.
 */
const NOBODY = 65534
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0

function asNobodyPrefix(): string[] | undefined {
  if (has('setpriv')) return ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups']
  if (has('runuser')) return ['runuser', '-u', 'nobody', '--']
  return undefined
}

const prefix = asNobodyPrefix()
const skipped =
  process.getuid?.() !== 0
    ? 'not running as root, so there is no other user to become; permissions are what this user has'
    : prefix === undefined
      ? 'neither setpriv nor runuser is installed to run the CLI as another user'
      : undefined

/** Runs the CLI as nobody in `cwd` (which nobody must be able to enter). */
function asNobody(args: string[], cwd: string): {status: number; stdout: string; stderr: string} {
  const run = spawnSync(prefix![0]!, [...prefix!.slice(1), ...cliArgv(args)], {cwd, encoding: 'utf8', env: {...process.env, HOME: cwd}})
  return {status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr}
}

/** Every file under `dirs` with a digest of its bytes and its mode: what "nothing changed" compares. */
function snapshot(...dirs: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const dir of dirs) {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const stat = statSync(path)
      // Files only: Deno keeps its cache in a directory under HOME, which is this one.
      if (!stat.isFile()) continue
      out[path] = `${stat.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
    }
  }
  return out
}

/** A new directory every user can enter, owned by `owner` (one of root's nobody cannot write). */
function directory(parent: string, name: string, owner: number): string {
  const dir = join(parent, name)
  mkdirSync(dir, {mode: 0o755})
  chmodSync(dir, 0o755)
  chownSync(dir, owner, owner)
  return dir
}

/** A store (with its key file) at `file`, owned by nobody with `mode`. */
function storeFor(from: string, file: string, mode: number): void {
  for (const suffix of ['', '.key']) {
    copyFileSync(`${from}${suffix}`, `${file}${suffix}`)
    chownSync(`${file}${suffix}`, NOBODY, NOBODY)
    chmodSync(`${file}${suffix}`, suffix === '' ? mode : 0o600)
  }
}

function failsWith(result: {status: number; stdout: string; stderr: string}, message: string): void {
  expect(result.status, result.stderr).toBe(1)
  expect(result.stdout).toBe('')
  expect(result.stderr).toMatch(new RegExp(`^Error: ${literal(message)}\\n$`))
}

const register = (file: string) => [...acmeRegistration(['--db', file]), '--json']

describe.skipIf(skipped !== undefined)(`store errors name the file or directory at fault${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  let root = ''
  let made = ''
  /** A directory nobody may not write, and one it may (its working directory). */
  let locked = ''
  let own = ''
  beforeAll(() => {
    root = tempDir()
    chmodSync(root, 0o755)
    made = join(root, 'made.db')
    cliJson(acmeRegistration(['--db', made]))
    locked = directory(root, 'locked', 0)
    own = directory(root, 'own', NOBODY)
  })

  it('a write in a directory this user cannot write names the directory, not "attempt to write a readonly database"', () => {
    const file = join(locked, 'store.db')
    storeFor(made, file, 0o600)
    const before = snapshot(locked)
    failsWith(asNobody(register(file), own), `cannot write the store: the directory ${locked} is not writable by this user (SQLite makes its journal files there)`)
    expect(snapshot(locked)).toEqual(before)
  })

  it('a write to a store file this user cannot write names the file', () => {
    const file = join(own, 'readonly.db')
    storeFor(made, file, 0o400)
    const before = snapshot(own)
    failsWith(asNobody(register(file), own), `cannot write the store: the file ${file} is not writable by this user`)
    expect(snapshot(own)).toEqual(before)
  })

  it('a read of a store file this user cannot read names the file', () => {
    const dir = directory(root, 'unreadable', NOBODY)
    const file = join(dir, 'store.db')
    storeFor(made, file, 0o200)
    const before = snapshot(dir)
    failsWith(asNobody(['list-clients', '--db', file, '--json'], own), `cannot read the store: the file ${file} is not readable by this user`)
    expect(snapshot(dir)).toEqual(before)
  })

  it('backup --to a directory this user cannot write names the directory, not EACCES', () => {
    const dir = directory(root, 'backed', NOBODY)
    const file = join(dir, 'store.db')
    storeFor(made, file, 0o600)
    const before = snapshot(dir, locked)
    failsWith(asNobody(['backup', '--db', file, '--to', join(locked, 'copy.db'), '--json'], own), `cannot write the backup: the directory ${locked} is not writable by this user`)
    expect(snapshot(dir, locked)).toEqual(before)
  })

  it('restore names a store directory it cannot write, and a backup it cannot read, before changing anything', () => {
    const dir = directory(root, 'restoring', NOBODY)
    const backup = join(dir, 'backup.db')
    storeFor(made, backup, 0o600)
    const store = join(locked, 'restored.db')
    storeFor(made, store, 0o600)
    const before = snapshot(dir, locked)
    failsWith(
      asNobody(['restore', '--db', store, '--from', backup, '--force', '--json'], own),
      `cannot write the store: the directory ${locked} is not writable by this user (SQLite makes its journal files there)`,
    )
    expect(snapshot(dir, locked)).toEqual(before)

    const unreadable = join(dir, 'unreadable.db')
    storeFor(made, unreadable, 0o200)
    const target = join(dir, 'target.db')
    storeFor(made, target, 0o600)
    const again = snapshot(dir)
    failsWith(asNobody(['restore', '--db', target, '--from', unreadable, '--force', '--json'], own), `cannot read the backup: the file ${unreadable} is not readable by this user`)
    expect(snapshot(dir)).toEqual(again)
  })
})
