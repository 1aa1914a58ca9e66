import {spawnSync} from 'node:child_process'
import {existsSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {tempDir} from '../helpers/cli.js'

const LAUNCHER = fileURLToPath(new URL('../../bin/medpanel-deno', import.meta.url))
const RUN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/*
 * bin/medpanel-deno put on a PATH of its own, as an operator would: it runs from wherever it is
 * linked, in the caller's directory, and says it is Deno that runs it.
 */
describe('the Deno launcher', () => {
  const bin = tempDir('medpanel-deno-bin-')
  symlinkSync(LAUNCHER, join(bin, 'medpanel-deno'))
  // As an operator's shell would run it: the test runner's choice of SQLite driver for Node
  // (better-sqlite3, which Deno cannot load) is not passed on.
  const {MEDPANEL_SQLITE_DRIVER: _driver, ...env} = process.env
  const run = (args: string[], cwd: string) => spawnSync('medpanel-deno', args, {cwd, encoding: 'utf8', env: {...env, PATH: `${bin}:${process.env.PATH}`}})

  it('names Deno and its version in --version, and in version --json', () => {
    const here = tempDir('medpanel-deno-cwd-')
    const plain = run(['--version'], here)
    expect(plain.status, plain.stderr).toBe(0)
    expect(plain.stdout).toMatch(/^medpanel\/\d+\.\d+\.\d+ linux-x64 deno-\d+\.\d+\.\d+\n$/)
    const json = JSON.parse(run(['version', '--json'], here).stdout) as {runtime: string; runtime_version: string}
    expect(json.runtime).toBe('deno')
    expect(json.runtime_version).toMatch(/^\d+\.\d+\.\d+$/)
  })

  it("resolves a relative --db against the caller's directory", () => {
    const here = tempDir('medpanel-deno-cwd-')
    const made = run(
      ['register-client', '--db', './here.db', '--name', 'Deno Co', '--url', 'https://deno.example', '--logo-url', 'https://deno.example/l.png', '--grant', 'balance', '--json'],
      here,
    )
    expect(made.status, made.stderr).toBe(0)
    expect(existsSync(join(here, 'here.db'))).toBe(true)
    const listed = JSON.parse(run(['list-clients', '--db', './here.db', '--json'], here).stdout) as {name: string}[]
    expect(listed.map((c) => c.name)).toEqual(['Deno Co'])
  })

  it('keeps the Node line on Node', () => {
    // The suite itself may run under Deno (npm test's deno run): then Node is the one on PATH.
    const node = 'deno' in process.versions ? 'node' : process.execPath
    const plain = spawnSync(node, [RUN, '--version'], {encoding: 'utf8'})
    expect(plain.stdout).toMatch(/^medpanel\/\d+\.\d+\.\d+ linux-x64 node-v\d+\./)
    const json = JSON.parse(spawnSync(node, [RUN, '--version', '--json'], {encoding: 'utf8'}).stdout) as {runtime: string; node: string; runtime_version: string}
    expect(json.runtime).toBe('node')
    expect(json.runtime_version).toBe(json.node)
  })
})
